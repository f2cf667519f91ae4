import CoreMetrics
import Foundation
import Metrics
import NIOConcurrencyHelpers
import Prometheus
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// The metrics a server exports at `GET /metrics`: ingest health and product metrics by app and category.
///
/// Two registries: the server's own operational series, which name no app and anyone may read, and the series by
/// app (volumes, categories, causes, firing alerts), which only a `metrics` or admin token reads (docs/security.md).
/// Each server has its own registries (no global `MetricsSystem` bootstrap), so several can run in one process.
public final class ServerMetrics: Sendable {
    /// The server's own series: no app label.
    public let registry: PrometheusCollectorRegistry
    /// The series by app and category.
    public let appRegistry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    let appFactory: PrometheusMetricsFactory
    private let labels = LabelLimiter()
    private let handles = NIOLockedValueBox(Handles())

    public init() {
        registry = PrometheusCollectorRegistry()
        appRegistry = PrometheusCollectorRegistry()
        var appFactory = PrometheusMetricsFactory(registry: appRegistry)
        appFactory.durationHistogramBuckets["pushtrace_service_duration_seconds"] =
            [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 25, 30, 35].map { .milliseconds(Int64($0 * 1000)) }
        self.appFactory = appFactory
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["pushtrace_ingest_duration_seconds"] =
            [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000].map { .microseconds(Int64($0 * 1000)) }
        factory.durationHistogramBuckets["pushtrace_commit_duration_seconds"] =
            factory.durationHistogramBuckets["pushtrace_ingest_duration_seconds"]
        self.factory = factory
    }

    /// The Prometheus text exposition: the operational series, and with `apps` the series by app too.
    public func exposition(apps: Bool = true) -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        if apps { appRegistry.emit(into: &buffer) }
        return buffer
    }

    // MARK: Ingest health

    func bundle(_ outcome: String) {
        counter("pushtrace_bundles_total", [("outcome", outcome)]).increment()
    }

    func records(accepted: Int, rejected: Int) {
        counter("pushtrace_records_total", [("outcome", "accepted")]).increment(by: accepted)
        counter("pushtrace_records_total", [("outcome", "rejected")]).increment(by: rejected)
    }

    func bytes(raw: Int, decompressed: Int) {
        counter("pushtrace_received_bytes_total", [("stage", "raw")]).increment(by: raw)
        counter("pushtrace_received_bytes_total", [("stage", "decompressed")]).increment(by: decompressed)
    }

    func response(route: String, status: Int) {
        counter("pushtrace_http_responses_total", [("route", route), ("status", String(status))]).increment()
    }

    /// One read of the token table: `found` or `absent` (a made-up or deleted token ID).
    func tokenLookup(found: Bool) {
        counter("pushtrace_token_lookups_total", [("outcome", found ? "found" : "absent")]).increment()
    }

    func ingestLatency(_ duration: Duration) {
        timer("pushtrace_ingest_duration_seconds").record(duration: duration)
    }

    /// `pushtrace_console_info{url}`, always 1: the console's public address (`--public-url`), which the alert rules'
    /// `console_url` annotation reads to link an alert to its notifications.
    func consoleInfo(url: String) {
        gauge("pushtrace_console_info", [("url", url)]).record(1)
    }

    func queueDepth(_ depth: Int) {
        gauge("pushtrace_ingest_queue_depth").record(depth)
    }

    func commit(bundles: Int, duration: Duration, failed: Bool) {
        counter("pushtrace_commits_total", [("outcome", failed ? "failed" : "committed")]).increment()
        if !failed {
            timer("pushtrace_commit_duration_seconds").record(duration: duration)
            counter("pushtrace_committed_bundles_total").increment(by: bundles)
        }
    }

    // MARK: Product

    /// Counts what a stored bundle tells about the extensions, by app and category.
    func product(appID: String, tally: ProductTally) {
        guard !tally.steps.isEmpty else { return }
        let app = labels.app(appID)
        // A bundle's steps fall in a category or two: their series are looked up once per category.
        var series: [String: ProductSeries] = [:]
        for (step, named) in tally.categorizedSteps() {
            let category = named ?? ""
            let handles =
                series[category]
                ?? {
                    let made = productSeries(app: app, category: labels.category(category, app: app))
                    series[category] = made
                    return made
                }()
            switch step.kind {
            case .serviceRun: handles.serviceRuns.increment()
            case .serviceCrash: handles.serviceCrashes.increment()
            case .serviceTimeout: handles.serviceTimeouts.increment()
            case .contentExpansion: handles.contentExpansions.increment()
            case .contentAction: handles.contentActions.increment()
            case .serviceDelivery: break
            }
            if let elapsed = step.elapsedMs { handles.serviceDurations.recordMilliseconds(elapsed) }
        }
    }

    /// Sets `pushtrace_notifications{app,category,cause}`: settled notifications first seen in the current UTC hour
    /// and the 23 before, by primary cause. Combinations no longer present drop to zero.
    func notificationsByCause(_ counts: [CauseCount], previous: Set<CauseSeriesKey>) -> Set<CauseSeriesKey> {
        var seen = Set<CauseSeriesKey>()
        for count in counts {
            let key = CauseSeriesKey(
                app: labels.app(count.appID), category: labels.category(count.category, app: labels.app(count.appID)),
                cause: count.cause)
            seen.insert(key)
            gauge(key).record(count.count)
        }
        for key in previous.subtracting(seen) { gauge(key).record(0) }
        return seen
    }

    /// The labels of one `pushtrace_alert_firing` series.
    struct AlertKey: Hashable, Sendable {
        var rule: String
        var app: String
        var category: String
    }

    /// Sets `pushtrace_alert_firing{rule,app,category}` to 1 for each firing alert and to 0 for those that fired
    /// at the previous evaluation and no longer do; returns what fires now. Beside it, the firing alert's rates,
    /// `pushtrace_alert_window_rate` and `pushtrace_alert_baseline_rate`, which an Alertmanager notification quotes.
    func alertsFiring(_ alerts: [FiringAlert], previous: Set<AlertKey>) -> Set<AlertKey> {
        var firing: [AlertKey: FiringAlert] = [:]
        for alert in alerts {
            let app = labels.app(alert.appID)
            let key = AlertKey(rule: alert.rule, app: app, category: labels.category(alert.category, app: app))
            // Two apps folded into one label (over the label limit): the higher rate speaks for the series.
            if let other = firing[key], other.windowRate >= alert.windowRate { continue }
            firing[key] = alert
        }
        for key in Set(firing.keys).union(previous) {
            let dimensions = [("rule", key.rule), ("app", key.app), ("category", key.category)]
            let alert = firing[key]
            gauge("pushtrace_alert_firing", dimensions, apps: true).record(alert == nil ? 0 : 1)
            gauge("pushtrace_alert_window_rate", dimensions, apps: true).record(alert?.windowRate ?? 0)
            gauge("pushtrace_alert_baseline_rate", dimensions, apps: true).record(alert?.baselineRate ?? 0)
        }
        return Set(firing.keys)
    }

    /// Sets `pushtrace_audience_devices{app,group}`: each app's devices active in the last 7 days (`active`), those
    /// with a settings record (`with_settings`), and by their latest settings `notifications_disabled`,
    /// `provisional`, `scheduled_delivery` and `time_sensitive_disabled` (the report's audience). Apps no longer
    /// present drop to zero; returns the app labels set.
    func audiences(_ figures: [String: AudienceFigures], previous: Set<String>) -> Set<String> {
        // Apps folded into one label (over the label limit) add up.
        var counts: [String: [Int]] = [:]
        for (appID, audience) in figures {
            let values = [
                audience.devices, audience.withSettings, audience.notificationsDisabled, audience.provisional,
                audience.scheduledDelivery, audience.timeSensitiveDisabled,
            ]
            let app = labels.app(appID)
            counts[app] = zip(counts[app] ?? values.map { _ in 0 }, values).map(+)
        }
        let groups = ["active", "with_settings", "notifications_disabled", "provisional", "scheduled_delivery", "time_sensitive_disabled"]
        for app in Set(counts.keys).union(previous) {
            for (index, group) in groups.enumerated() {
                gauge("pushtrace_audience_devices", [("app", app), ("group", group)], apps: true).record(counts[app]?[index] ?? 0)
            }
        }
        return Set(counts.keys)
    }

    // MARK: Handles

    /// The handles made so far, by name and label values. Making one goes through the registry (its lock, a check
    /// of the name, a lookup), which every update of every upload would otherwise pay.
    private struct Handles {
        var counters: [[String]: CoreMetrics.Counter] = [:]
        var timers: [[String]: CoreMetrics.Timer] = [:]
        var gauges: [[String]: CoreMetrics.Gauge] = [:]
        var products: [[String]: ProductSeries] = [:]
    }

    private func productSeries(app: String, category: String) -> ProductSeries {
        handles.withLockedValue { handles in
            if let series = handles.products[[app, category]] { return series }
            let series = ProductSeries(app: app, category: category, factory: appFactory)
            handles.products[[app, category]] = series
            return series
        }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        handle(\.counters, label, dimensions) { CoreMetrics.Counter(label: $0, dimensions: $1, factory: factory) }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        handle(\.timers, label, dimensions) { CoreMetrics.Timer(label: $0, dimensions: $1, factory: factory) }
    }

    private func gauge(_ label: String, _ dimensions: [(String, String)] = [], apps: Bool = false) -> CoreMetrics.Gauge {
        handle(\.gauges, label, dimensions) {
            CoreMetrics.Gauge(label: $0, dimensions: $1, factory: apps ? appFactory : factory)
        }
    }

    private func handle<Handle>(
        _ table: WritableKeyPath<Handles, [[String]: Handle]>, _ label: String,
        _ dimensions: [(String, String)], make: (String, [(String, String)]) -> Handle
    ) -> Handle {
        let key = dimensions.reduce(into: [label]) { $0 += [$1.0, $1.1] }
        return handles.withLockedValue { handles in
            if let handle = handles[keyPath: table][key] { return handle }
            let handle = make(label, dimensions)
            handles[keyPath: table][key] = handle
            return handle
        }
    }

    private func gauge(_ key: CauseSeriesKey) -> CoreMetrics.Gauge {
        gauge("pushtrace_notifications", [("app", key.app), ("category", key.category), ("cause", key.cause)], apps: true)
    }
}

/// The product series of one app and category, made together on first use and kept: a bundle's steps then cost
/// one lookup per category rather than one per series. Series made at once start at zero, as Prometheus advises
/// for series known in advance.
private struct ProductSeries: Sendable {
    let serviceRuns: CoreMetrics.Counter
    let serviceCrashes: CoreMetrics.Counter
    let serviceTimeouts: CoreMetrics.Counter
    let contentExpansions: CoreMetrics.Counter
    let contentActions: CoreMetrics.Counter
    let serviceDurations: CoreMetrics.Timer

    init(app: String, category: String, factory: PrometheusMetricsFactory) {
        let dimensions = [("app", app), ("category", category)]
        let counter = { CoreMetrics.Counter(label: $0, dimensions: dimensions, factory: factory) }
        serviceRuns = counter("pushtrace_service_runs_total")
        serviceCrashes = counter("pushtrace_service_crashes_total")
        serviceTimeouts = counter("pushtrace_service_timeouts_total")
        contentExpansions = counter("pushtrace_content_expansions_total")
        contentActions = counter("pushtrace_content_actions_total")
        serviceDurations = CoreMetrics.Timer(label: "pushtrace_service_duration_seconds", dimensions: dimensions, factory: factory)
    }
}

/// The labels of one series of the notifications-by-cause gauge.
struct CauseSeriesKey: Hashable, Sendable {
    var app: String
    var category: String
    var cause: String
}

/// Bounds label cardinality: category names come from devices, and a buggy or hostile one must not create a series
/// per typo. Past the limits, values are reported as `other`.
final class LabelLimiter: Sendable {
    private let state = NIOLockedValueBox(State())
    private let maxApps = 200
    private let maxCategoriesPerApp = 100

    private struct State {
        var apps: Set<String> = []
        var categories: [String: Set<String>] = [:]
    }

    func app(_ appID: String) -> String {
        state.withLockedValue { state in
            if state.apps.contains(appID) { return appID }
            guard state.apps.count < maxApps else { return "other" }
            state.apps.insert(appID)
            return appID
        }
    }

    func category(_ category: String?, app: String) -> String {
        guard let category, !category.isEmpty else { return "none" }
        return state.withLockedValue { state in
            var known = state.categories[app, default: []]
            if known.contains(category) { return category }
            guard known.count < maxCategoriesPerApp else { return "other" }
            known.insert(category)
            state.categories[app] = known
            return category
        }
    }
}
