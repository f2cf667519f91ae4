import PushTraceStore

extension PostgresStore {
    // Each is one statement, run outside a transaction: a token is read on every authenticated request.
    public func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) throws -> (TokenInfo, TokenText) {
        try withSession { try TokenRows.create(appID: appID, scope: scope, label: label, now: now, $0) }
    }

    public func tokens() throws -> [TokenInfo] {
        try withSession { try TokenRows.all($0) }
    }

    public func revokeToken(id: String, now: Int64) throws -> Bool {
        try withSession { try TokenRows.revoke(id: id, now: now, $0) }
    }

    public func storedToken(id: String) throws -> StoredToken? {
        try withSession { try TokenRows.stored(id: id, $0) }
    }
}
