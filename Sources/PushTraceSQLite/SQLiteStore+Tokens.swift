import PushTraceStore

extension SQLiteStore {
    /// Creates a token and returns its text: the only time the secret exists outside the client.
    ///
    /// - Parameter appID: required for `ingest` and `read`; nil makes an admin token for every app.
    public func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) throws -> (TokenInfo, TokenText) {
        try pool.write { try TokenRows.create(appID: appID, scope: scope, label: label, now: now, SQLiteSession(db: $0)) }
    }

    /// Every token, revoked ones included, oldest first.
    public func tokens() throws -> [TokenInfo] {
        try pool.read { try TokenRows.all(SQLiteSession(db: $0)) }
    }

    /// Revokes a token by its ID; returns false when no such token exists. Requests with it fail from then on.
    public func revokeToken(id: String, now: Int64) throws -> Bool {
        try pool.write { try TokenRows.revoke(id: id, now: now, SQLiteSession(db: $0)) }
    }

    public func storedToken(id: String) throws -> StoredToken? {
        try pool.read { try TokenRows.stored(id: id, SQLiteSession(db: $0)) }
    }
}
