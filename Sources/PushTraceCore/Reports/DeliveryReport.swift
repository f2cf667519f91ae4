import PushTraceRecords

/// The delivery report of one app for one period against the period before it (docs/spec.md §7, `pushtrace report`).
///
/// Its JSON holds the period's figures at the top level and the previous period's under `previous`. Rates are
/// fractions (`null` when nothing was there to divide by); percentiles are nearest-rank.
public struct DeliveryReport: Encodable, Sendable {
    public var appID: String
    /// The requested period's figures.
    public var figures: PeriodFigures
    /// The same figures for the period before.
    public var previous: PeriodFigures
    /// The timeout rate per UTC day of the period.
    public var timeoutRateByDay: [DayRate]
    /// One notification ID per cause, to run `pushtrace why` on.
    public var causeExamples: [String: String]
    public var byCategory: [Breakdown]
    public var byAppVersion: [Breakdown]
    public var byOSVersion: [Breakdown]
    /// Content-extension actions by identifier and response option, most used first.
    public var actions: [ActionCount]

    /// A breakdown row is flagged when its timeout or crash rate is at least this many times the rest's…
    public static let flagFactor = 2.0
    /// …and it had at least this many service-extension runs.
    public static let flagMinimumRuns = 20

    public init(_ input: ReportInput) {
        appID = input.appID
        figures = PeriodFigures(
            period: input.period, rows: input.rows, durations: input.durations, audience: input.audience)
        previous = PeriodFigures(
            period: input.previousPeriod, rows: input.previousRows, durations: input.previousDurations,
            audience: input.previousAudience)
        var byDay: [Int64: DeliveryCounts] = [:]
        for row in input.rows { byDay[row.day, default: DeliveryCounts()] += row.counts }
        timeoutRateByDay = input.period.days.map { day in
            let counts = byDay[day] ?? DeliveryCounts()
            return DayRate(date: ReportPeriod.dateText(day: day), ran: counts.serviceRan, timeouts: counts.serviceTimeouts)
        }
        let causes = figures.causes
        causeExamples = input.examples.filter { causes[$0.key] != nil }
        byCategory = Breakdown.rows(input.rows, by: \.category)
        byAppVersion = Breakdown.rows(input.rows, by: \.appVersion)
        byOSVersion = Breakdown.rows(input.rows, by: \.os)
        actions = input.actions.sorted { ($0.count, $1.action, $1.response) > ($1.count, $0.action, $0.response) }
    }

    enum CodingKeys: String, CodingKey {
        case appID = "app_id", previous, timeoutRateByDay = "timeout_rate_by_day", causeExamples = "cause_examples"
        case byCategory = "by_category", byAppVersion = "by_app_version", byOSVersion = "by_os_version", actions
        case funnelChange = "funnel_change_pp"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appID, forKey: .appID)
        try figures.encode(to: encoder)
        try container.encode(Dictionary(uniqueKeysWithValues: funnelChange.map { ($0.step, $0.points) }), forKey: .funnelChange)
        try container.encode(timeoutRateByDay, forKey: .timeoutRateByDay)
        try container.encode(causeExamples, forKey: .causeExamples)
        try container.encode(byCategory, forKey: .byCategory)
        try container.encode(byAppVersion, forKey: .byAppVersion)
        try container.encode(byOSVersion, forKey: .byOSVersion)
        try container.encode(actions, forKey: .actions)
        try container.encode(previous, forKey: .previous)
    }

    /// Each funnel step's change of rate since the previous period, in percentage points (nil when either rate is).
    public var funnelChange: [(step: String, points: Double?)] {
        zip(figures.funnel, previous.funnel).map { now, before in
            (now.step, now.rate.flatMap { rate in before.rate.map { (rate - $0) * 100 } })
        }
    }
}

/// The figures of one period.
public struct PeriodFigures: Encodable, Sendable {
    public var period: ReportPeriod
    public var notifications: Int
    /// sent → accepted by APNs → reached a device → service extension ran → delivered / timed out / crashed →
    /// expanded → acted on; each step's rate is its count over the step it follows (`of`).
    public var funnel: [FunnelStep]
    public var service: ServiceFigures
    public var attachments: AttachmentFigures
    /// Primary cause → notifications.
    public var causes: [String: Int]
    /// The devices of the period and their notification settings.
    public var audience: AudienceFigures

    init(period: ReportPeriod, rows: [DailyCounts], durations: [(ms: Int64, count: Int)], audience: AudienceFigures) {
        self.period = period
        self.audience = audience
        let total = rows.reduce(into: DeliveryCounts()) { $0 += $1.counts }
        notifications = total.notifications
        funnel = FunnelStep.steps(total)
        service = ServiceFigures(total, durations: durations)
        var failures: [String: Int] = [:]
        var causes: [String: Int] = [:]
        for row in rows {
            if !row.attachmentFailure.isEmpty { failures[row.attachmentFailure, default: 0] += row.counts.attachmentFailed }
            causes[row.cause, default: 0] += row.counts.notifications
        }
        attachments = AttachmentFigures(total, failures: failures.filter { $0.value > 0 })
        self.causes = causes.filter { $0.value > 0 }
    }

    enum CodingKeys: String, CodingKey { case period, notifications, funnel, service, attachments, causes, audience }
}

/// One step of the delivery funnel.
public struct FunnelStep: Encodable, Sendable {
    public var step: String
    public var count: Int
    /// The step this one's rate is taken over.
    public var of: String
    @Null public var rate: Double?

    static func steps(_ c: DeliveryCounts) -> [FunnelStep] {
        func step(_ name: String, _ count: Int, of base: String, _ baseCount: Int) -> FunnelStep {
            FunnelStep(step: name, count: count, of: base, rate: ratio(count, baseCount))
        }
        return [
            step("sent", c.sent, of: "notifications", c.notifications),
            step("apns_accepted", c.apnsAccepted, of: "sent", c.sent),
            step("reached_device", c.deviceReached, of: "notifications", c.notifications),
            step("service_ran", c.serviceRan, of: "reached_device", c.deviceReached),
            step("delivered", c.serviceDelivered, of: "service_ran", c.serviceRan),
            step("timed_out", c.serviceTimeouts, of: "service_ran", c.serviceRan),
            step("crashed", c.serviceCrashed, of: "service_ran", c.serviceRan),
            step("expanded", c.expanded, of: "reached_device", c.deviceReached),
            step("acted", c.acted, of: "expanded", c.expanded),
        ]
    }

}

/// The service extension's figures (docs/spec.md §7): `ran`, `delivered`, `timeouts`, `timeout_rate = timeouts / ran`,
/// and the durations of `service.delivered` / `service.expired`.
public struct ServiceFigures: Encodable, Sendable {
    public var ran: Int
    public var delivered: Int
    public var timeouts: Int
    public var crashes: Int
    @Null public var timeoutRate: Double?
    /// Service-extension crashes per run.
    @Null public var crashRate: Double?
    @Null public var durationMs: Percentiles?

    init(_ c: DeliveryCounts, durations: [(ms: Int64, count: Int)]) {
        ran = c.serviceRan
        delivered = c.serviceDelivered
        timeouts = c.serviceTimeouts
        crashes = c.serviceCrashed
        timeoutRate = ratio(timeouts, ran)
        crashRate = ratio(crashes, ran)
        durationMs = Percentiles(durations)
    }

    enum CodingKeys: String, CodingKey {
        case ran, delivered, timeouts, crashes, timeoutRate = "timeout_rate", crashRate = "crash_rate"
        case durationMs = "duration_ms"
    }
}

/// Nearest-rank percentiles of a distribution given as distinct values and their counts.
public struct Percentiles: Encodable, Sendable, Hashable {
    public var p50: Int64
    public var p90: Int64
    public var p99: Int64

    /// Nil when there are no values.
    public init?(_ histogram: [(ms: Int64, count: Int)]) {
        let sorted = histogram.filter { $0.count > 0 }.sorted { $0.ms < $1.ms }
        let total = sorted.reduce(0) { $0 + $1.count }
        guard total > 0 else { return nil }
        func rank(_ percent: Int) -> Int64 {
            // Nearest rank: the smallest value with at least ⌈p·N⌉ values at or below it.
            let target = (percent * total + 99) / 100
            var seen = 0
            for entry in sorted {
                seen += entry.count
                if seen >= target { return entry.ms }
            }
            return sorted[sorted.count - 1].ms
        }
        p50 = rank(50)
        p90 = rank(90)
        p99 = rank(99)
    }
}

/// Attachments: downloads, failures by reason, sizes.
public struct AttachmentFigures: Encodable, Sendable {
    public var downloads: Int
    public var downloadBytes: Int
    /// Notifications whose download or attachment failed.
    public var failed: Int
    /// Reason → notifications.
    public var failures: [String: Int]
    /// Notifications by downloaded bytes: `under_100kB`, `under_1MB`, `under_10MB`, `10MB_or_more`.
    public var sizes: [String: Int]

    /// The size bands' names, in order.
    public static let sizeBands = ["under_100kB", "under_1MB", "under_10MB", "10MB_or_more"]

    init(_ c: DeliveryCounts, failures: [String: Int]) {
        downloads = c.downloads
        downloadBytes = c.downloadBytes
        failed = c.attachmentFailed
        self.failures = failures
        sizes = Dictionary(uniqueKeysWithValues: zip(Self.sizeBands, c.sizeBands))
    }

    enum CodingKeys: String, CodingKey { case downloads, downloadBytes = "download_bytes", failed, failures, sizes }
}

/// The timeout rate of one day.
public struct DayRate: Encodable, Sendable {
    public var date: String
    public var ran: Int
    public var timeouts: Int
    @Null public var rate: Double?

    init(date: String, ran: Int, timeouts: Int) {
        self.date = date
        self.ran = ran
        self.timeouts = timeouts
        rate = ratio(timeouts, ran)
    }
}

/// The figures of one category, app version or OS version, flagged when its timeout or crash rate is at least
/// twice the rest's.
public struct Breakdown: Encodable, Sendable {
    public var name: String
    public var notifications: Int
    public var serviceRan: Int
    public var timeouts: Int
    /// Extension crashes, service and content.
    public var crashes: Int
    @Null public var timeoutRate: Double?
    @Null public var crashRate: Double?
    /// `timeouts` and/or `crashes` when that rate is at least twice the rest's.
    public var flags: [String]

    init(name: String, notifications: Int, serviceRan: Int, timeouts: Int, crashes: Int, flags: [String]) {
        self.name = name
        self.notifications = notifications
        self.serviceRan = serviceRan
        self.timeouts = timeouts
        self.crashes = crashes
        timeoutRate = ratio(timeouts, serviceRan)
        crashRate = ratio(crashes, serviceRan)
        self.flags = flags
    }

    static func rows(_ rows: [DailyCounts], by key: KeyPath<DailyCounts, String>) -> [Breakdown] {
        var groups: [String: DeliveryCounts] = [:]
        var total = DeliveryCounts()
        for row in rows {
            groups[row[keyPath: key], default: DeliveryCounts()] += row.counts
            total += row.counts
        }
        return groups.filter { $0.value.notifications > 0 }.map { name, c in
            let restRan = total.serviceRan - c.serviceRan
            var flags: [String] = []
            if c.serviceRan >= DeliveryReport.flagMinimumRuns, restRan > 0 {
                func stands(out mine: Int, _ all: Int) -> Bool {
                    let rate = Double(mine) / Double(c.serviceRan), rest = Double(all - mine) / Double(restRan)
                    return mine > 0 && rate >= DeliveryReport.flagFactor * rest
                }
                if stands(out: c.serviceTimeouts, total.serviceTimeouts) { flags.append("timeouts") }
                if stands(out: c.crashes, total.crashes) { flags.append("crashes") }
            }
            return Breakdown(
                name: name.isEmpty ? "(none)" : name, notifications: c.notifications, serviceRan: c.serviceRan,
                timeouts: c.serviceTimeouts, crashes: c.crashes, flags: flags)
        }.sorted { ($0.notifications, $1.name) > ($1.notifications, $0.name) }
    }

    enum CodingKeys: String, CodingKey {
        case name, notifications, serviceRan = "service_ran", timeouts, timeoutRate = "timeout_rate", crashes
        case crashRate = "crash_rate", flags
    }
}

/// An optional that encodes as JSON `null` when absent instead of leaving its key out: a report's rate is always
/// there, `null` when there was nothing to divide by.
@propertyWrapper
public struct Null<Value: Encodable & Sendable>: Encodable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

/// `part / whole`, or nil when `whole` is 0.
func ratio(_ part: Int, _ whole: Int) -> Double? {
    whole > 0 ? Double(part) / Double(whole) : nil
}
