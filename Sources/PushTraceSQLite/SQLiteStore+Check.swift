import GRDB
import PushTraceStore

extension SQLiteStore {
    /// Reads every block back and recounts what the store keeps about its lines: each bundle's count, the index
    /// entry of each notification's blocks, and each notification summary's count of records. In one read
    /// transaction, so a server may go on writing; its summaries still waiting (``SummaryBacklog``) are left out of
    /// the recount. Holds one count per notification in memory.
    public func check() throws -> StoreCheck {
        try pool.read { db in
            var check = StoreCheck()
            let reader = BlockReader(db: db, dictionaries: dictionaries)
            var perBundle: [Int64: Int] = [:]
            var perNotification: [NotificationRef: Int] = [:]
            let index = try db.makeStatement(sql: "SELECT EXISTS (SELECT 1 FROM notification_block WHERE key = ? AND block = ?)")
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT \(BlockReader.columns), u.summarized, b.bundle_ref FROM record_block b
                    JOIN bundle u ON u.id = b.bundle_ref ORDER BY b.id
                    """)
            while let row = try rows.next() {
                check.blocks += 1
                let summarized: Bool = row[7], bundle: Int64 = row[8]
                var keys: Set<Int64> = []
                var lines = 0
                do {
                    try reader.lines(of: row) { line in
                        lines += 1
                        guard let id = line.notificationID else { return }
                        let key = NotificationBlockKey.of(appID: line.appID, notificationID: id)
                        if keys.insert(key).inserted, try !(Bool.fetchOne(index, arguments: [key, line.block]) ?? false) {
                            check.unindexedLines += 1
                        }
                        if summarized { perNotification[NotificationRef(app: line.appID, id: id), default: 0] += 1 }
                    }
                } catch {
                    check.unreadableBlocks += 1
                }
                check.records += lines
                perBundle[bundle, default: 0] += lines
            }
            let bundles = try Row.fetchCursor(db, sql: "SELECT id, accepted FROM bundle WHERE pruned_at IS NULL")
            while let bundle = try bundles.next() {
                if perBundle[bundle[0], default: 0] != bundle[1] as Int { check.miscountedBundles += 1 }
            }
            check.orphanBlocks =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM record_block WHERE bundle_ref NOT IN (SELECT id FROM bundle)
                        """) ?? 0
            // A summary outlives its lines when retention deleted their bundles: one with no line left is
            // miscounted only in a store retention never ran on.
            let pruned = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM bundle WHERE pruned_at IS NOT NULL)") ?? false
            let summaries = try Row.fetchCursor(db, sql: "SELECT app_id, notification_id, records FROM notification")
            while let summary = try summaries.next() {
                let ref = NotificationRef(app: summary[0], id: summary[1])
                if let counted = perNotification.removeValue(forKey: ref) {
                    if counted != summary[2] as Int { check.miscountedNotifications += 1 }
                } else if !pruned {
                    check.miscountedNotifications += 1
                }
            }
            check.miscountedNotifications += perNotification.count
            return check
        }
    }
}

private struct NotificationRef: Hashable {
    var app: String
    var id: String
}
