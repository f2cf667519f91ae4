/// What one retention pass deleted.
public struct RetentionReport: Sendable, Equatable, CustomStringConvertible {
    /// Bundles whose records were deleted (their rows stay, so that a late re-upload is still a duplicate).
    public var bundles = 0
    public var records = 0
    public var rejectedLines = 0
    /// Notification summaries (their `action_list` with them) whose every record was before the cut-off.
    public var notifications = 0
    /// Config records superseded by a later one of the same app, device and process.
    public var configs = 0
    /// Rows of the minute rollup (the alerts' window); the hourly and daily rollups the reports read are kept.
    public var minuteRows = 0
    /// Dictionaries emptied: no block named them any more, a newer one of their app having replaced them
    /// (``DictionaryRetirement``; the SQLite engine).
    public var dictionaries = 0

    public init() {}

    public var description: String {
        "\(records) records of \(bundles) bundles, \(rejectedLines) rejected lines, \(notifications) notification "
            + "summaries, \(configs) superseded config records, \(minuteRows) minute-rollup rows, \(dictionaries) "
            + "superseded dictionaries emptied"
    }
}

/// The bundles one retention transaction deletes the records of: bounded in lines and in bytes, since every line
/// is read back (to find the index entries its notification left) while the transaction holds the writer.
package enum RetentionBatch {
    /// The most bytes of stored lines (decompressed) one transaction reads.
    package static let byteLimit = 32 << 20

    /// The candidates, in the order given, until their lines reach `lineLimit` or their bytes ``byteLimit``;
    /// at least one, so that a single bundle over either limit still goes.
    package static func take<Bundle>(
        _ candidates: [Bundle], lineLimit: Int, byteLimit: Int = byteLimit,
        lines: (Bundle) -> Int, bytes: (Bundle) -> Int
    ) -> [Bundle] {
        var taken: [Bundle] = []
        var (lineCount, byteCount) = (0, 0)
        for bundle in candidates {
            guard taken.isEmpty || (lineCount < lineLimit && byteCount + bytes(bundle) <= byteLimit) else { break }
            taken.append(bundle)
            lineCount += lines(bundle)
            byteCount += bytes(bundle)
        }
        return taken
    }
}
