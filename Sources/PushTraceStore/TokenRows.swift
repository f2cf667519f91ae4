import Foundation

/// The token table's statements, written once for every engine. Each engine runs them in the session its work
/// calls for: a transaction, or on PostgreSQL a single statement outside one, which a request's authentication
/// reads without the round trips a transaction adds.
package enum TokenRows {
    /// Stores a new token and returns its text: the only time the secret exists outside the client.
    package static func create(
        appID: String?, scope: TokenScope, label: String?, now: Int64, _ session: some SQLSession
    ) async throws -> (TokenInfo, TokenText) {
        let text = TokenText.generate()
        let info = TokenInfo(id: text.id, appID: appID, scope: scope, label: label, createdAt: now, revokedAt: nil)
        try await session.execute(
            """
            INSERT INTO token (id, app_id, scope, secret_sha256, label, created_at)
            VALUES (\(info.id), \(appID), \(scope.rawValue), \(SQLBytes(Array(text.secretHash))), \(label), \(now))
            """)
        return (info, text)
    }

    /// Every token, revoked ones included, oldest first.
    package static func all(_ session: some SQLSession) async throws -> [TokenInfo] {
        try await session.rows("SELECT id, app_id, scope, label, created_at, revoked_at FROM token ORDER BY created_at, id")
            .map { row in
                TokenInfo(
                    id: try row.decode("id"), appID: try row.decode("app_id"),
                    scope: TokenScope(rawValue: try row.decode("scope")), label: try row.decode("label"),
                    createdAt: try row.decode("created_at"), revokedAt: try row.decode("revoked_at"))
            }
    }

    /// Revokes a token; false when there is no such token. A revoked token keeps its first revocation time.
    package static func revoke(id: String, now: Int64, _ session: some SQLSession) async throws -> Bool {
        try await session.execute("UPDATE token SET revoked_at = coalesce(revoked_at, \(now)) WHERE id = \(id)") > 0
    }

    /// The token stored under `id`, revoked or not, or nil: one read by the primary key.
    package static func stored(id: String, _ session: some SQLSession) async throws -> StoredToken? {
        try await session.rows(
            "SELECT id, app_id, scope, label, created_at, revoked_at, secret_sha256 FROM token WHERE id = \(id)"
        ).first.map { row in
            StoredToken(
                id: try row.decode("id"), appID: try row.decode("app_id"), scope: try row.decode("scope"),
                label: try row.decode("label"), createdAt: try row.decode("created_at"),
                revokedAt: try row.decode("revoked_at"), secretSHA256: Data(try row.decode("secret_sha256", as: SQLBytes.self).bytes))
        }
    }
}
