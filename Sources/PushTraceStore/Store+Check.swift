import GRDB

/// What ``Store/check()`` found: the stored lines recounted from their blocks, against the counts kept beside them.
public struct StoreCheck: Sendable, Equatable, Codable, CustomStringConvertible {
    public var blocks = 0
    /// Lines read back from the blocks.
    public var records = 0
    /// Blocks that could not be decompressed or split into the lines they were stored with.
    public var unreadableBlocks = 0
    /// Bundles whose blocks do not hold exactly the lines their `accepted` count says.
    public var miscountedBundles = 0
    /// Blocks that belong to no bundle.
    public var orphanBlocks = 0
    /// Lines of a notification whose block is missing from `notification_block` (`why` would not find them).
    public var unindexedLines = 0
    /// Notification summaries whose `records` differs from a recount of their lines, including summaries with no
    /// line at all and lines with no summary (bundles whose summaries are still waiting are left out).
    public var miscountedNotifications = 0

    public init() {}

    /// Whether everything recounted agrees.
    public var isConsistent: Bool {
        unreadableBlocks == 0 && miscountedBundles == 0 && orphanBlocks == 0 && unindexedLines == 0 && miscountedNotifications == 0
    }

    public var description: String {
        "\(records) records in \(blocks) blocks; \(unreadableBlocks) unreadable blocks, \(miscountedBundles) miscounted "
            + "bundles, \(orphanBlocks) orphan blocks, \(unindexedLines) unindexed lines, \(miscountedNotifications) "
            + "miscounted notification summaries"
    }

    enum CodingKeys: String, CodingKey {
        case blocks, records
        case unreadableBlocks = "unreadable_blocks"
        case miscountedBundles = "miscounted_bundles"
        case orphanBlocks = "orphan_blocks"
        case unindexedLines = "unindexed_lines"
        case miscountedNotifications = "miscounted_notifications"
    }
}

extension Store {
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
            let rows = try Row.fetchCursor(db, sql: """
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
            check.orphanBlocks = try Int.fetchOne(db, sql: """
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
