/// Which stored lines `pushtrace export` reads back.
public struct ExportFilter: Sendable, Equatable {
    public var appID: String?
    /// Lines whose corrected time is at or after this (epoch ms); lines without a time are left out by a time bound.
    public var since: Int64?
    /// Lines whose corrected time is before this.
    public var until: Int64?
    /// Only the lines of this notification (any spelling of its ID: it is normalized as stored).
    public var notificationID: String?

    public init(appID: String? = nil, since: Int64? = nil, until: Int64? = nil, notificationID: String? = nil) {
        self.appID = appID
        self.since = since
        self.until = until
        self.notificationID = notificationID
    }

    /// Whether a line stored under `correctedTs` is within the time bounds.
    package func includes(correctedTs ts: Int64?) -> Bool {
        if let since, (ts ?? .min) < since { return false }
        if let until, (ts ?? .max) >= until { return false }
        return true
    }
}

/// One stored line: exactly as it was received, and the time it is stored under (the device's time corrected by
/// its bundle's clock offset), when it has one.
public struct ExportedLine: Sendable {
    public var body: String
    public var correctedTs: Int64?

    package init(body: String, correctedTs: Int64?) {
        self.body = body
        self.correctedTs = correctedTs
    }
}
