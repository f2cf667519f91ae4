import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import PushTraceStore

/// Checks a request's bearer token against the store (docs/spec.md §8): 401 without a live token, 403 when its scope or
/// app does not allow what is asked.
///
/// Tokens read from the store are cached by ID (``TokenCache``): a store read per upload would cost as much as
/// storing it, and a stranger's made-up tokens must not cost a read each.
struct Authenticator: Sendable {
    let store: any TokenStore
    let requiresTokens: Bool
    let metrics: ServerMetrics?
    private let cache: TokenCache

    init(store: any TokenStore, requiresTokens: Bool, cacheSeconds: Double, metrics: ServerMetrics? = nil) {
        self.store = store
        self.requiresTokens = requiresTokens
        self.metrics = metrics
        self.cache = TokenCache(foundSeconds: cacheSeconds)
    }

    /// Who is asking: a token, or everyone when tokens are off (`--no-auth`).
    enum Caller: Sendable {
        case anyone
        case token(TokenInfo)

        /// The one app a caller is confined to, or nil for every app. A token other than admin without an app (a
        /// row edited by hand) is confined to none.
        var confinedApp: String? {
            if case .token(let token) = self, token.scope != .admin { return token.appID ?? "" }
            return nil
        }

        /// The app a read is about: `asked`, which a read token may only set to its own app (and implies).
        func app(asking asked: String?) throws -> String? {
            if asked?.isEmpty == true { throw APIError.badRequest("app= is empty: name the app (its bundle identifier)") }
            guard let confined = confinedApp else { return asked }
            if let asked, asked != confined {
                throw APIError.forbidden("this token reads app \(confined), not \(asked)")
            }
            return confined
        }

        /// The key of the caller's per-token limits on uploads: an ingest token's ID. Nil for an admin token and
        /// for `--no-auth`, the operator's own, which share the budget without a cap of their own.
        var budgetKey: String? {
            if case .token(let token) = self, token.scope == .ingest { return token.id }
            return nil
        }

        /// Whether the caller may act on `appID`.
        func covers(appID: String) -> Bool {
            if case .token(let token) = self { return token.covers(appID: appID) }
            return true
        }
    }

    /// The caller, if its token has one of `scopes`.
    func caller(of request: Request, allowing scopes: Set<TokenScope>, toDo action: String) async throws -> Caller {
        guard requiresTokens else { return .anyone }
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("no token: send `Authorization: Bearer <token>` (pushtrace token create makes one)")
        }
        guard let text = Self.bearerToken(header) else {
            throw APIError.unauthorized("the Authorization header must be `Bearer <token>`")
        }
        guard let token = try await verify(text) else {
            throw APIError.unauthorized("unknown or revoked token")
        }
        guard let scope = token.scope, scopes.contains(scope) else {
            throw APIError.forbidden("a token with scope \(token.scope?.rawValue ?? "unknown") cannot \(action)")
        }
        return .token(token)
    }

    /// Whether a `GET /metrics` may include the series by app: with a metrics or admin token (or `--no-auth`).
    /// Without an `Authorization` header it may not; a header with a token that is unknown (401) or of another
    /// scope (403) is refused, so that a scraper misconfigured is told so rather than served less.
    func mayReadAppMetrics(_ request: Request) async throws -> Bool {
        guard requiresTokens else { return true }
        guard request.headers[.authorization] != nil else { return false }
        _ = try await caller(of: request, allowing: [.metrics, .admin], toDo: "read the metrics by app")
        return true
    }

    /// The token of a `Bearer <token>` header (the scheme in any case, spaces and tabs around the token), or nil.
    /// Byte by byte: Foundation's case folding and trimming were a tenth of an upload's request handling.
    static func bearerToken(_ header: String) -> String? {
        let scheme = "bearer ".utf8
        let bytes = header.utf8
        guard bytes.count > scheme.count,
            zip(bytes, scheme).allSatisfy({ (65...90).contains($0) ? $0 + 32 == $1 : $0 == $1 })
        else { return nil }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let token = bytes.dropFirst(scheme.count).drop(while: isBlank)
        guard let last = token.lastIndex(where: { !isBlank($0) }) else { return nil }
        return String(Substring(token[...last]))
    }

    /// The live token `bearer` is, and its stored row (which signs the console's sessions), or nil.
    func verifiedToken(_ bearer: String) async throws -> (TokenInfo, StoredToken)? {
        // A text that cannot be a token is refused without a store read.
        guard let text = TokenText(bearer), let stored = try await storedToken(id: text.id),
            let token = stored.verifying(text)
        else { return nil }
        return (token, stored)
    }

    /// The live token a console session cookie names, or nil (malformed, expired, a wrong signature, revoked).
    func sessionToken(_ cookie: String, now: Int64 = Int64(Date().timeIntervalSince1970)) async throws -> TokenInfo? {
        guard let session = SessionText(cookie) else { return nil }
        return try await storedToken(id: session.tokenID)?.verifying(session, now: now)
    }

    /// The caller of a request that may come from the console: its bearer token when it sends one, otherwise its
    /// session cookie (a browser's `EventSource` cannot send a header). nil when it has neither.
    func caller(ofConsoleOrBearer request: Request, allowing scopes: Set<TokenScope>, toDo action: String) async throws -> Caller {
        guard requiresTokens, request.headers[.authorization] == nil,
            let cookie = ConsoleSessionCookie.value(in: request)
        else { return try await caller(of: request, allowing: scopes, toDo: action) }
        guard let token = try await sessionToken(cookie) else {
            throw APIError.unauthorized("the console session ended: sign in again at /ui/login")
        }
        guard let scope = token.scope, scopes.contains(scope) else {
            throw APIError.forbidden("a token with scope \(token.scope?.rawValue ?? "unknown") cannot \(action)")
        }
        return .token(token)
    }

    private func verify(_ bearer: String) async throws -> TokenInfo? {
        try await verifiedToken(bearer)?.0
    }

    /// A token not cached is read from the store, awaited; a store that cannot answer is 503, which the client
    /// retries.
    private func storedToken(id: String) async throws -> StoredToken? {
        let store = self.store
        let metrics = self.metrics
        return try await cache.token(id: id) {
            let found = try await APIError.reading(store) { try await store.storedToken(id: id) }
            metrics?.tokenLookup(found: found != nil)
            return found
        }
    }
}
