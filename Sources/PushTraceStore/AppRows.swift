/// The apps a store holds, read through its indexes: written once for every engine.
package enum AppRows {
    /// Every app with a summary, in order, found by skipping through the key (one look-up per app), not by scanning.
    package static func all(_ session: some SQLSession) async throws -> [String] {
        try await skipping(through: "notification", session)
    }

    /// Every app that stored a bundle, its summaries written or not, skipping through the bundles' unique index.
    package static func uploading(_ session: some SQLSession) async throws -> [String] {
        try await skipping(through: "bundle", session)
    }

    /// The distinct `app_id`s of `table`, whose index begins with it, by one look-up each.
    private static func skipping(through table: String, _ session: some SQLSession) async throws -> [String] {
        try await session.rows(
            """
            WITH RECURSIVE app(id) AS (
                SELECT min(app_id) FROM \(unsafeRaw: table)
                UNION ALL
                SELECT (SELECT min(app_id) FROM \(unsafeRaw: table) WHERE app_id > app.id) FROM app WHERE app.id IS NOT NULL
            )
            SELECT id FROM app WHERE id IS NOT NULL
            """
        ).map { try $0.decode("id") }
    }

    /// The apps a notification ID is stored for, in order; `key` as ``NotificationKey/normalize(_:)`` makes it.
    package static func storing(notification key: String, _ session: some SQLSession) async throws -> [String] {
        try await session.rows("SELECT app_id FROM notification WHERE notification_id = \(key) ORDER BY app_id")
            .map { try $0.decode("app_id") }
    }
}
