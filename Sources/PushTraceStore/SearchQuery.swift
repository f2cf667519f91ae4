import PushTraceCore

/// Filters of `pushtrace search`; every one is optional.
public struct SearchQuery: Sendable {
    public var appID: String?
    public var cause: Cause?
    public var category: String?
    public var deviceID: String?
    /// Inclusive lower bound on the notification's first record, epoch milliseconds.
    public var since: Int64?
    /// Exclusive upper bound.
    public var until: Int64?
    public var limit: Int
    /// Rows skipped before the first returned: the console's pages.
    public var offset: Int

    public init(
        appID: String? = nil, cause: Cause? = nil, category: String? = nil, deviceID: String? = nil,
        since: Int64? = nil, until: Int64? = nil, limit: Int = 50, offset: Int = 0
    ) {
        self.offset = offset
        self.appID = appID
        self.cause = cause
        self.category = category
        self.deviceID = deviceID
        self.since = since
        self.until = until
        self.limit = limit
    }
}
