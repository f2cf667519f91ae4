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

    public init() {}

    public var description: String {
        "\(records) records of \(bundles) bundles, \(rejectedLines) rejected lines, \(notifications) notification "
            + "summaries, \(configs) superseded config records, \(minuteRows) minute-rollup rows"
    }
}
