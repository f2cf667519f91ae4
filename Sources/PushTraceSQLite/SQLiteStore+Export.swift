import GRDB
import PushTraceCore
import PushTraceStore

extension SQLiteStore {
    /// Every accepted line that `filter` selects, in the order stored, handed to `line` one at a time: memory stays
    /// bounded (a block of lines at a time) however many there are. Runs in one read transaction, so the lines are
    /// those of one moment.
    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        try pool.read { db in
            let reader = BlockReader(db: db, dictionaries: dictionaries)
            if let id = filter.notificationID {
                // Through the index: a notification's lines are in a few blocks of each app that mentions it.
                let key = NotificationKey.normalize(id)
                var found: [StoredLine] = []
                let apps = try filter.appID.map { [$0] } ?? AppRows.uploading(SQLiteSession(db: db))
                for app in apps {
                    found += try reader.lines(appID: app, notificationID: key).filter { filter.includes(correctedTs: $0.ts) }
                }
                for stored in found.sorted(by: { ($0.block, $0.index) < ($1.block, $1.index) }) {
                    try line(ExportedLine(body: stored.body, correctedTs: stored.ts))
                }
                return
            }
            // Blocks in the order stored; with a time range, only those of bundles whose time span meets it are
            // decoded (the span is checked on the bundle row before the block's data is read).
            let span = BundleTimeSpan.overlapCondition(since: filter.since, until: filter.until)
            let sql =
                "SELECT \(BlockReader.columns) FROM record_block b JOIN bundle u ON u.id = b.bundle_ref WHERE "
                + (filter.appID == nil ? "" : "u.app_id = ? AND ") + span.sql + " ORDER BY b.id"
            var arguments = StatementArguments(filter.appID.map { [$0] } ?? [])
            arguments += StatementArguments(span.arguments)
            try reader.forEachLineTime(db.makeStatement(sql: sql), arguments: arguments) { body, ts in
                if filter.includes(correctedTs: ts) { try line(ExportedLine(body: body, correctedTs: ts)) }
            }
        }
    }
}
