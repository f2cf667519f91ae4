import PushTraceCore

/// The firing alerts as the overview and the alerts page list them, each linking to the search that shows the
/// notifications behind it.
struct AlertList: Sendable {
    struct Item: Sendable {
        var rule: String
        var app: String
        var category: String
        var rate: String
        var failures: Int
        var total: Int
        var baseline: String
        var searchURL: String
    }

    var alerts: [Item]
    var hasAlerts: Bool
    var quiet: String

    init(_ report: AlertReport) {
        alerts = report.firing.map { alert in
            Item(
                rule: HTMLText.visible(alert.rule), app: HTMLText.visible(alert.appID),
                category: HTMLText.visible(alert.category.isEmpty ? "no category" : alert.category),
                rate: Percent.text(alert.windowRate), failures: alert.windowFailures, total: alert.windowTotal,
                baseline: Percent.text(alert.baselineRate), searchURL: ConsoleURL.alertSearch(alert))
        }
        hasAlerts = !alerts.isEmpty
        quiet =
            report.evaluated == 0
            ? "No alert fires: no window had enough notifications to judge."
            : "No alert fires (\(report.evaluated) \(report.evaluated == 1 ? "window" : "windows") judged)."
    }
}

/// Rates as the console writes them.
enum Percent {
    static func text(_ rate: Double?) -> String {
        guard let rate else { return "–" }
        return format(rate * 100) + "%"
    }
}

extension ConsoleURL {
    /// The console's search for an alert's notifications: its app and category over its window, and the cause its
    /// metric counts when there is one.
    public static func alertSearch(_ alert: FiringAlert) -> String {
        let cause: Cause? =
            switch alert.metric {
            case AlertRule.Metric.serviceTimeout.rawValue: .serviceTimeout
            case AlertRule.Metric.attachmentFailure.rawValue: .attachmentFailed
            case AlertRule.Metric.notificationsDisabled.rawValue: .notificationsDisabled
            default: nil
            }
        return ConsoleURL.link(
            "/ui/search",
            [
                ("app", alert.appID), ("category", alert.category.isEmpty ? nil : alert.category),
                ("cause", cause?.rawValue), ("since", UTCText.iso(alert.windowStart)),
                ("until", UTCText.iso(alert.windowEnd)),
            ])
    }
}

/// The console's address as the world reaches it (`--public-url https://push.example.com`), for links in alerts.
public struct PublicURL: Sendable, Hashable {
    /// The URL without a trailing slash.
    public var base: String

    /// Parses an `http://` or `https://` URL with a host and no query; nil for anything else.
    public init?(_ text: String) {
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        let lower = trimmed.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"),
            let hostStart = trimmed.range(of: "://")?.upperBound, hostStart < trimmed.endIndex,
            !trimmed.contains("?"), !trimmed.contains("#"),
            !trimmed.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "<" || $0 == ">" })
        else { return nil }
        base = trimmed
    }

    /// `report` with each firing alert linked to its notifications in the console.
    public func linking(_ report: AlertReport) -> AlertReport {
        var report = report
        for index in report.firing.indices {
            report.firing[index].consoleURL = base + ConsoleURL.alertSearch(report.firing[index])
        }
        return report
    }
}
