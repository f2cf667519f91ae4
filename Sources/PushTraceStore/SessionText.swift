import Crypto
import Foundation

/// The console's session (docs/console.md): a cookie value that names a token and an expiry, signed with an HMAC
/// keyed by the token's stored hash. Any server sharing the store can check it, the token itself is never in it,
/// and revoking the token ends every session made with it.
///
/// Whoever can read the token table could sign a session; such a reader can read every table already.
public struct SessionText: Sendable, Hashable {
    public var tokenID: String
    /// Epoch seconds after which the session is refused.
    public var expires: Int64
    /// The HMAC-SHA256, base64url without padding.
    public var mac: String

    /// Parses `<token id>.<expires>.<mac>`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 12, parts[0].allSatisfy(\.isHexDigit), parts[1].count <= 12,
            let expires = Int64(parts[1]), expires > 0, parts[2].count == 43
        else { return nil }
        tokenID = String(parts[0])
        self.expires = expires
        mac = String(parts[2])
    }

    /// A new session for `token` that ends at `expires` (epoch seconds).
    public init(token: StoredToken, expires: Int64) {
        tokenID = token.id
        self.expires = expires
        mac = Self.mac(token: token, expires: expires)
    }

    /// The cookie value.
    public var text: String { "\(tokenID).\(expires).\(mac)" }

    static func mac(token: StoredToken, expires: Int64) -> String {
        let key = SymmetricKey(data: token.secretSHA256)
        let code = HMAC<SHA256>.authenticationCode(for: Data("pushtrace console session v1|\(token.id)|\(expires)".utf8), using: key)
        return Data(code).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

extension StoredToken {
    /// The live token a session names, or nil: another token, a wrong signature (compared in constant time),
    /// expired at `now` (epoch seconds), revoked, or a scope this version does not know.
    public func verifying(_ session: SessionText, now: Int64) -> TokenInfo? {
        guard session.tokenID == id, session.expires > now,
            TokenText.constantTimeEqual(Data(session.mac.utf8), Data(SessionText.mac(token: self, expires: session.expires).utf8)),
            revokedAt == nil, let scope = TokenScope(rawValue: scope)
        else { return nil }
        return TokenInfo(id: id, appID: appID, scope: scope, label: label, createdAt: createdAt, revokedAt: nil)
    }
}
