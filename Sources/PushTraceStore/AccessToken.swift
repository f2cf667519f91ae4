import Crypto
import Foundation

/// What a token may do (docs/spec.md §8).
public enum TokenScope: String, Sendable, CaseIterable, Codable {
    /// Uploads bundles and events for its one app; reads nothing.
    case ingest
    /// Reads its one app.
    case read
    /// Reads every app (and may ingest for any).
    case admin
    /// Reads `GET /metrics` with its series by app (a Prometheus scraper's token); nothing else.
    case metrics
}

/// A stored token, without its secret.
public struct TokenInfo: Sendable, Hashable, Codable {
    /// The public part of the token (`pt_<id>_…`): what `token list` shows and `token revoke` takes.
    public var id: String
    /// The app the token is for; nil for an admin token, which covers every app.
    public var appID: String?
    /// What the token may do; nil for a scope this version does not know (a later version's token, or a row edited
    /// by hand), which may do nothing: it is listed as it is stored and never verifies.
    public var scope: TokenScope?
    public var label: String?
    /// Epoch milliseconds.
    public var createdAt: Int64
    public var revokedAt: Int64?

    enum CodingKeys: String, CodingKey {
        case id, appID = "app_id", scope, label, createdAt = "created_at", revokedAt = "revoked_at"
    }

    package init(id: String, appID: String?, scope: TokenScope?, label: String?, createdAt: Int64, revokedAt: Int64?) {
        self.id = id
        self.appID = appID
        self.scope = scope
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Whether this token may act on `appID` at all (an admin token may act on any app).
    public func covers(appID: String) -> Bool {
        scope == .admin || self.appID == appID
    }
}

/// A token as the store keeps it: its row, with the hash of its secret. What a bearer text is checked against
/// (``verifying(_:)``), in one place for every engine; the server caches it by ID, so a wrong secret for a known ID
/// and a made-up ID both cost no store read after the first.
public struct StoredToken: Sendable, Hashable {
    public var id: String
    public var appID: String?
    /// The scope as stored: a scope this version does not know verifies nothing (fails closed).
    public var scope: String
    public var label: String?
    public var createdAt: Int64
    public var revokedAt: Int64?
    /// The SHA-256 of the secret.
    public var secretSHA256: Data

    package init(
        id: String, appID: String?, scope: String, label: String?, createdAt: Int64, revokedAt: Int64?,
        secretSHA256: Data
    ) {
        self.id = id
        self.appID = appID
        self.scope = scope
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.secretSHA256 = secretSHA256
    }

    /// The live token `text` names, or nil: another ID, a wrong secret (compared in constant time), revoked, or
    /// a scope this version does not know.
    public func verifying(_ text: TokenText) -> TokenInfo? {
        guard text.id == id, TokenText.constantTimeEqual(text.secretHash, secretSHA256), revokedAt == nil,
            let scope = TokenScope(rawValue: scope)
        else { return nil }
        return TokenInfo(id: id, appID: appID, scope: scope, label: label, createdAt: createdAt, revokedAt: nil)
    }
}

/// The text of a bearer token, `pt_<id>_<secret>`: a public ID to find it by and a 256-bit random secret of which
/// only the SHA-256 is stored.
public struct TokenText: Sendable, Hashable {
    public var id: String
    public var secret: String

    /// A new token from the system's cryptographic random source.
    public static func generate() -> TokenText {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            .base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return TokenText(id: id, secret: secret)
    }

    /// Parses `pt_<id>_<secret>`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "pt", parts[1].count == 12, !parts[2].isEmpty,
            parts[1].allSatisfy(\.isHexDigit)
        else { return nil }
        self.id = String(parts[1])
        self.secret = String(parts[2])
    }

    init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    /// The token as given to a client (`Authorization: Bearer …`).
    public var text: String { "pt_\(id)_\(secret)" }

    /// The SHA-256 of the secret: all that is stored.
    package var secretHash: Data { Data(SHA256.hash(data: Data(secret.utf8))) }

    /// Compares two hashes in time independent of where they differ.
    package static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
