/// What ``TraceStore/check()`` found: the stored lines recounted from their blocks, against the counts kept beside them.
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

extension BlockReading {
    /// How many index entries one statement of the check looks up.
    static var entriesPerLookUp: Int { 256 }

    /// Reads every block back, a page at a time, and recounts what the store keeps about its lines: each bundle's
    /// count, the index entry of each notification's blocks, and each notification summary's count of records, in
    /// the caller's snapshot. `summarized` is the SQL, over `bundle u`, that says a bundle's summaries are written:
    /// those of a bundle still waiting are left out of the recount. Holds one count per notification in memory.
    package func check(summarized: String) throws -> StoreCheck {
        var check = StoreCheck()
        var perBundle: [Int64: Int] = [:]
        var perNotification: [NotificationRowKey: Int] = [:]
        var after: Int64 = 0
        while true {
            let rows = try session.rows(
                """
                SELECT \(unsafeRaw: Self.columns), \(unsafeRaw: summarized) AS summarized, b.bundle_ref FROM record_block b
                JOIN bundle u ON u.id = b.bundle_ref WHERE b.id > \(after) ORDER BY b.id LIMIT \(Self.blocksPerPage)
                """)
            var entries: [IndexEntry] = []
            for row in rows {
                let block = try Self.block(row)
                let (counted, bundle): (Bool, Int64) = (try row.decode(at: 7), try row.decode(at: 8))
                after = block.id
                check.blocks += 1
                var lines = 0
                var keys: Set<Int64> = []
                do {
                    try reader.forEachLine(of: block) { line in
                        lines += 1
                        guard let id = line.notificationID else { return }
                        let key = NotificationBlockKey.of(appID: line.appID, notificationID: id)
                        if keys.insert(key).inserted { entries.append(IndexEntry(key: key, block: block.id)) }
                        if counted { perNotification[NotificationRowKey(appID: line.appID, notificationID: id), default: 0] += 1 }
                    }
                } catch {
                    check.unreadableBlocks += 1
                }
                check.records += lines
                perBundle[bundle, default: 0] += lines
            }
            check.unindexedLines += try unindexed(entries)
            if rows.count < Self.blocksPerPage { break }
        }
        try session.each("SELECT id, accepted FROM bundle WHERE pruned_at IS NULL") { row in
            if perBundle[try row.decode(at: 0), default: 0] != (try row.decode(at: 1, as: Int.self)) { check.miscountedBundles += 1 }
        }
        check.orphanBlocks =
            try session.rows(
                "SELECT count(*) FROM record_block r WHERE NOT EXISTS (SELECT 1 FROM bundle b WHERE b.id = r.bundle_ref)"
            ).first?.decode(at: 0) ?? 0
        // A summary outlives its lines when retention deleted their bundles: one with no line left is miscounted
        // only in a store retention never ran on.
        let pruned: Bool =
            try session.rows("SELECT EXISTS (SELECT 1 FROM bundle WHERE pruned_at IS NOT NULL)").first?.decode(at: 0) ?? false
        try session.each("SELECT app_id, notification_id, records FROM notification") { row in
            let key = NotificationRowKey(appID: try row.decode(at: 0), notificationID: try row.decode(at: 1))
            if let counted = perNotification.removeValue(forKey: key) {
                if counted != (try row.decode(at: 2, as: Int.self)) { check.miscountedNotifications += 1 }
            } else if !pruned {
                check.miscountedNotifications += 1
            }
        }
        check.miscountedNotifications += perNotification.count
        return check
    }

    /// How many of `entries` the index lacks, looked up a few hundred at a time.
    private func unindexed(_ entries: [IndexEntry]) throws -> Int {
        var missing = 0
        for start in stride(from: 0, to: entries.count, by: Self.entriesPerLookUp) {
            let chunk = entries[start..<min(start + Self.entriesPerLookUp, entries.count)]
            let pairs = SQLStatement.joined(chunk.map { entry -> SQLStatement in "(\(entry.key), \(entry.block))" }, separator: ", ")
            let found = try session.rows("SELECT key, block FROM notification_block WHERE (key, block) IN (VALUES \(pairs))")
            let indexed = Set(try found.map { IndexEntry(key: try $0.decode(at: 0), block: try $0.decode(at: 1)) })
            missing += chunk.filter { !indexed.contains($0) }.count
        }
        return missing
    }
}

private struct IndexEntry: Hashable {
    var key: Int64
    var block: Int64
}
