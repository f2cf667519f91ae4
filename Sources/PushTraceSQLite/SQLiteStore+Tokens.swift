import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
    /// Creates a token and returns its text: the only time the secret exists outside the client.
    ///
    /// - Parameter appID: required for `ingest` and `read`; nil makes an admin token for every app.
    public func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) throws -> (TokenInfo, TokenText) {
        let text = TokenText.generate()
        let info = TokenInfo(id: text.id, appID: appID, scope: scope, label: label, createdAt: now, revokedAt: nil)
        try pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO token (id, app_id, scope, secret_sha256, label, created_at) VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [info.id, appID, scope.rawValue, text.secretHash, label, now])
        }
        return (info, text)
    }

    /// Every token, revoked ones included, oldest first.
    public func tokens() throws -> [TokenInfo] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, app_id, scope, label, created_at, revoked_at FROM token ORDER BY created_at, id")
                .map(TokenInfo.init(row:))
        }
    }

    /// Revokes a token by its ID; returns false when no such token exists. Requests with it fail from then on.
    public func revokeToken(id: String, now: Int64) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "UPDATE token SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", arguments: [now, id])
            return db.changesCount > 0
        }
    }

    public func storedToken(id: String) throws -> StoredToken? {
        try pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT id, app_id, scope, label, created_at, revoked_at, secret_sha256 FROM token WHERE id = ?
                    """, arguments: [id]
            ).map { row in
                StoredToken(
                    id: row["id"], appID: row["app_id"], scope: row["scope"], label: row["label"],
                    createdAt: row["created_at"], revokedAt: row["revoked_at"], secretSHA256: row["secret_sha256"])
            }
        }
    }
}

extension TokenInfo {
    init(row: Row) {
        self.init(
            id: row["id"], appID: row["app_id"], scope: TokenScope(rawValue: row["scope"]),
            label: row["label"], createdAt: row["created_at"], revokedAt: row["revoked_at"])
    }
}
