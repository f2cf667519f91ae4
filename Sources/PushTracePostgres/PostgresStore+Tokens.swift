import Foundation
import NIOCore
import PostgresNIO
import PushTraceStore

extension PostgresStore {
    public func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) throws -> (TokenInfo, TokenText) {
        let text = TokenText.generate()
        let info = TokenInfo(id: text.id, appID: appID, scope: scope, label: label, createdAt: now, revokedAt: nil)
        _ = try withSession { session in
            try session.query(
                """
                INSERT INTO token (id, app_id, scope, secret_sha256, label, created_at)
                VALUES (\(info.id), \(appID), \(scope.rawValue), \(ByteBuffer(data: text.secretHash)), \(label), \(now))
                """)
        }
        return (info, text)
    }

    public func tokens() throws -> [TokenInfo] {
        try withSession { session in
            try session.query("SELECT id, app_id, scope, label, created_at, revoked_at FROM token ORDER BY created_at, id")
                .map { row in
                    let (id, app, scope, label, created, revoked) = try row.decode((String, String?, String, String?, Int64, Int64?).self)
                    return TokenInfo(
                        id: id, appID: app, scope: TokenScope(rawValue: scope), label: label,
                        createdAt: created, revokedAt: revoked)
                }
        }
    }

    public func revokeToken(id: String, now: Int64) throws -> Bool {
        try withSession { session in
            try session.changes("UPDATE token SET revoked_at = coalesce(revoked_at, \(now)) WHERE id = \(id)") > 0
        }
    }

    public func storedToken(id: String) throws -> StoredToken? {
        try withSession { session in
            guard
                let row = try session.query(
                    """
                    SELECT id, app_id, scope, label, created_at, revoked_at, secret_sha256 FROM token WHERE id = \(id)
                    """
                ).first(where: { _ in true })
            else { return nil }
            let (id, app, scope, label, created, revoked, secret) =
                try row.decode((String, String?, String, String?, Int64, Int64?, ByteBuffer).self)
            return StoredToken(
                id: id, appID: app, scope: scope, label: label, createdAt: created, revokedAt: revoked,
                secretSHA256: Data(buffer: secret))
        }
    }
}
