/// The tokens role of a store (docs/spec.md §8): the server's authenticator and `pushtrace token` hold only this.
/// Its calls are awaited: the engine waits on the database where no caller's thread is held up.
public protocol TokenStore: StoreAccess {
    /// A new token; its secret is returned once and only its hash is kept.
    func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) async throws -> (TokenInfo, TokenText)
    /// Every token, revoked ones included, oldest first.
    func tokens() async throws -> [TokenInfo]
    /// Revokes a token; false when there is no such token or it was revoked already.
    func revokeToken(id: String, now: Int64) async throws -> Bool
    /// The token stored under `id`, revoked or not, or nil when there is none: one indexed read. Checking a bearer
    /// text against it is ``StoredToken/verifying(_:)``'s, the same for every engine.
    func storedToken(id: String) async throws -> StoredToken?
}

extension TokenStore {
    /// The live token a bearer text names, or nil (malformed, unknown, revoked, a wrong secret, an unknown scope).
    public func verifyToken(_ bearer: String) async throws -> TokenInfo? {
        guard let text = TokenText(bearer) else { return nil }
        return try await storedToken(id: text.id)?.verifying(text)
    }
}
