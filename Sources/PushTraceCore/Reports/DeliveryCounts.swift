import PushTraceRecords

/// Counts over a set of notifications, as the store's daily rollup keeps them (see `docs/schema.md`, `daily`).
public struct DeliveryCounts: Sendable, Hashable {
    public var notifications = 0
    /// With `push.sent`.
    public var sent = 0
    /// With a `push.apns_response` of status 200.
    public var apnsAccepted = 0
    /// With any record from a device.
    public var deviceReached = 0
    /// With `service.received`.
    public var serviceRan = 0
    /// With `service.delivered`.
    public var serviceDelivered = 0
    /// With `service.expired`.
    public var serviceTimeouts = 0
    /// With `service.abnormal_exit`.
    public var serviceCrashed = 0
    /// With `content.abnormal_exit`.
    public var contentCrashed = 0
    /// With `content.received` (the user expanded the notification).
    public var expanded = 0
    /// With a `content.action` or an `app.response`.
    public var acted = 0
    /// `service.download` records, and the bytes they fetched.
    public var downloads = 0
    public var downloadBytes = 0
    /// With a failed download or attachment.
    public var attachmentFailed = 0
    /// Notifications by the bytes their downloads fetched: under 100 kB, 1 MB, 10 MB, and the rest.
    public var sizeBands = [0, 0, 0, 0]

    public init() {}

    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum += rhs
        return sum
    }

    public static func += (lhs: inout Self, rhs: Self) {
        lhs.notifications += rhs.notifications
        lhs.sent += rhs.sent
        lhs.apnsAccepted += rhs.apnsAccepted
        lhs.deviceReached += rhs.deviceReached
        lhs.serviceRan += rhs.serviceRan
        lhs.serviceDelivered += rhs.serviceDelivered
        lhs.serviceTimeouts += rhs.serviceTimeouts
        lhs.serviceCrashed += rhs.serviceCrashed
        lhs.contentCrashed += rhs.contentCrashed
        lhs.expanded += rhs.expanded
        lhs.acted += rhs.acted
        lhs.downloads += rhs.downloads
        // Saturating: a day's sum from a store written before sizes were bounded may be anything.
        let (bytes, overflow) = lhs.downloadBytes.addingReportingOverflow(rhs.downloadBytes)
        lhs.downloadBytes = overflow ? .max : bytes
        lhs.attachmentFailed += rhs.attachmentFailed
        for band in lhs.sizeBands.indices { lhs.sizeBands[band] += rhs.sizeBands[band] }
    }

    /// Extension crashes (service or content) per service-extension run.
    var crashes: Int { serviceCrashed + contentCrashed }
}

/// One row of the daily rollup: the counts of one app's notifications first seen on one UTC day, with one
/// category, app version, OS, primary cause and attachment failure reason ("" when none).
public struct DailyCounts: Sendable, Hashable {
    public var day: Int64
    public var category: String
    public var appVersion: String
    public var os: String
    public var cause: String
    public var attachmentFailure: String
    public var counts: DeliveryCounts

    public init(
        day: Int64, category: String, appVersion: String, os: String, cause: String, attachmentFailure: String,
        counts: DeliveryCounts
    ) {
        self.day = day
        self.category = category
        self.appVersion = appVersion
        self.os = os
        self.cause = cause
        self.attachmentFailure = attachmentFailure
        self.counts = counts
    }
}

/// How often a content-extension action was answered with a response option.
public struct ActionCount: Encodable, Sendable, Hashable {
    public var action: String
    public var response: String
    public var count: Int

    public init(action: String, response: String, count: Int) {
        self.action = action
        self.response = response
        self.count = count
    }
}

/// Everything a delivery report is computed from, read from the rollups by the store.
public struct ReportInput: Sendable {
    public var appID: String
    public var period: ReportPeriod
    public var previousPeriod: ReportPeriod
    public var rows: [DailyCounts]
    public var previousRows: [DailyCounts]
    /// Service-extension durations: each distinct millisecond value and how many notifications took it.
    public var durations: [(ms: Int64, count: Int)]
    public var previousDurations: [(ms: Int64, count: Int)]
    public var actions: [ActionCount]
    /// One notification per cause in the period, to run `pushtrace why` on.
    public var examples: [String: String]
    /// The period's devices, by their latest notification settings at or before the period's end.
    public var audience: AudienceFigures
    public var previousAudience: AudienceFigures

    public init(
        appID: String, period: ReportPeriod, previousPeriod: ReportPeriod, rows: [DailyCounts],
        previousRows: [DailyCounts], durations: [(ms: Int64, count: Int)],
        previousDurations: [(ms: Int64, count: Int)], actions: [ActionCount], examples: [String: String],
        audience: AudienceFigures = AudienceFigures(), previousAudience: AudienceFigures = AudienceFigures()
    ) {
        self.audience = audience
        self.previousAudience = previousAudience
        self.appID = appID
        self.period = period
        self.previousPeriod = previousPeriod
        self.rows = rows
        self.previousRows = previousRows
        self.durations = durations
        self.previousDurations = previousDurations
        self.actions = actions
        self.examples = examples
    }
}
