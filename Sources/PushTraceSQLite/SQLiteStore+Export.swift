import GRDB
import PushTraceStore
import PushTraceCore

extension SQLiteStore {
    /// Every accepted line that `filter` selects, in the order stored, handed to `line` one at a time: memory stays
    /// bounded (a block of lines at a time) however many there are. Runs in one read transaction, so the lines are
    /// those of one moment.
    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        func selected(_ stored: StoredLine) -> Bool {
            if let since = filter.since, (stored.ts ?? .min) < since { return false }
            if let until = filter.until, (stored.ts ?? .max) >= until { return false }
            return true
        }
        try pool.read { db in
            let reader = BlockReader(db: db, dictionaries: dictionaries)
            if let id = filter.notificationID {
                // Through the index: a notification's lines are in a few blocks of each app that mentions it.
                let key = NotificationKey.normalize(id)
                var found: [StoredLine] = []
                // Every app that stored a bundle (the summaries may not be written yet), skipping through the
                // bundles' unique index.
                let apps = try filter.appID.map { [$0] } ?? String.fetchAll(db, sql: """
                    WITH RECURSIVE app(id) AS (
                        SELECT min(app_id) FROM bundle
                        UNION ALL
                        SELECT (SELECT min(app_id) FROM bundle WHERE app_id > app.id) FROM app WHERE app.id IS NOT NULL
                    )
                    SELECT id FROM app WHERE id IS NOT NULL
                    """)
                for app in apps {
                    found += try reader.lines(appID: app, notificationID: key).filter(selected)
                }
                for stored in found.sorted(by: { ($0.block, $0.index) < ($1.block, $1.index) }) {
                    try line(ExportedLine(body: stored.body, correctedTs: stored.ts))
                }
                return
            }
            let sql = "SELECT \(BlockReader.columns) FROM record_block b JOIN bundle u ON u.id = b.bundle_ref"
                + (filter.appID == nil ? "" : " WHERE u.app_id = ?") + " ORDER BY b.id"
            try reader.forEachLine(db.makeStatement(sql: sql), arguments: StatementArguments(filter.appID.map { [$0] } ?? [])) {
                if selected($0) { try line(ExportedLine(body: $0.body, correctedTs: $0.ts)) }
            }
        }
    }
}
