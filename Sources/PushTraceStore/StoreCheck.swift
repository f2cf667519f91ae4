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
