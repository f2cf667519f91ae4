import PushTraceCore

/// `GET /ui/reports/weekly`: the delivery report of one app and week with charts: causes week over week, the
/// service extension's durations, the timeout rate by category and the audience's settings. Every chart has a
/// table beside it with the same figures, as the report's JSON holds them.
public struct ReportPage: Sendable {
    struct CauseRow: Sendable {
        var cause: String
        var count: Int
        var previous: Int
        var searchURL: String
    }

    struct Figure: Sendable {
        var name: String
        var key: String
        var value: String
        var previous: String
    }

    struct CategoryRow: Sendable {
        var name: String
        var ran: Int
        var timeouts: Int
        var rate: String
    }

    var app: String
    var showApp: Bool
    var week: String
    var previousWeek: String
    var previousWeekURL: String
    var nextWeekURL: String?
    var notifications: Int
    var previousNotifications: Int
    var ran: Int
    var previousRan: Int
    var timeouts: Int
    var previousTimeouts: Int
    var timeoutRate: String
    var previousTimeoutRate: String
    var causes: [CauseRow]
    var causesChart: String
    var durations: [Figure]
    var durationsChart: String
    var categories: [CategoryRow]
    var categoriesChart: String
    var audience: [Figure]
    var audienceChart: String

    /// `showApp` for a viewer of every app, who may switch to another; `now` decides whether a week after exists.
    public init(report: DeliveryReport, showApp: Bool, now: Int64) {
        let figures = report.figures
        let before = report.previous
        app = HTMLText.visible(report.appID)
        self.showApp = showApp
        week = figures.period.label
        previousWeek = before.period.label
        let appItem: (String, String?) = ("app", report.appID)
        previousWeekURL = ConsoleURL.link("/ui/reports/weekly", [appItem, ("week", before.period.label)])
        let next = ReportPeriod(weekContaining: figures.period.end)
        nextWeekURL = next.start <= now ? ConsoleURL.link("/ui/reports/weekly", [appItem, ("week", next.label)]) : nil
        notifications = figures.notifications
        previousNotifications = before.notifications
        ran = figures.service.ran
        previousRan = before.service.ran
        timeouts = figures.service.timeouts
        previousTimeouts = before.service.timeouts
        timeoutRate = Percent.text(figures.service.timeoutRate)
        previousTimeoutRate = Percent.text(before.service.timeoutRate)

        let names = Set(figures.causes.keys).union(before.causes.keys)
        let sorted = names.sorted { (figures.causes[$1] ?? 0, $0) < (figures.causes[$0] ?? 0, $1) }
        causes = sorted.map { name in
            CauseRow(
                cause: HTMLText.visible(name), count: figures.causes[name] ?? 0, previous: before.causes[name] ?? 0,
                searchURL: ConsoleURL.link(
                    "/ui/search",
                    [("cause", name), appItem, ("since", UTCText.iso(figures.period.start)), ("until", UTCText.iso(figures.period.end))]))
        }
        let legend = (now: figures.period.label, before: before.period.label)
        causesChart =
            BarChart(
                id: "causes-chart", title: "Notifications by cause, \(figures.period.label) against \(before.period.label)",
                rows: sorted.map { name in
                    let now = figures.causes[name] ?? 0
                    let was = before.causes[name] ?? 0
                    return BarChart.Row(
                        label: name, value: Double(now), before: Double(was), valueText: String(now), beforeText: String(was))
                }, legend: legend
            ).svg

        let percentiles: [(String, KeyPath<Percentiles, Int64>)] = [("p50", \.p50), ("p90", \.p90), ("p99", \.p99)]
        durations = percentiles.map { name, path in
            Figure(
                name: name, key: name, value: figures.service.durationMs.map { String($0[keyPath: path]) } ?? "–",
                previous: before.service.durationMs.map { String($0[keyPath: path]) } ?? "–")
        }
        durationsChart =
            BarChart(
                id: "durations-chart", title: "Service extension duration percentiles in milliseconds",
                rows: percentiles.map { name, path in
                    let now = figures.service.durationMs?[keyPath: path]
                    let was = before.service.durationMs?[keyPath: path]
                    return BarChart.Row(
                        label: name, value: Double(now ?? 0), before: Double(was ?? 0),
                        valueText: now.map { "\($0) ms" } ?? "none", beforeText: was.map { "\($0) ms" } ?? "none")
                }, legend: legend
            ).svg

        let withRuns = report.byCategory.filter { $0.serviceRan > 0 }
        categories = withRuns.map { row in
            CategoryRow(name: HTMLText.visible(row.name), ran: row.serviceRan, timeouts: row.timeouts, rate: Percent.text(row.timeoutRate))
        }
        categoriesChart =
            BarChart(
                id: "categories-chart", title: "Service extension timeout rate by category, \(figures.period.label)",
                rows: withRuns.map { row in
                    BarChart.Row(label: row.name, value: row.timeoutRate ?? 0, valueText: Percent.text(row.timeoutRate))
                }
            ).svg

        let audienceRows: [(String, String, KeyPath<AudienceFigures, Int>)] = [
            ("Uploaded records", "devices", \.devices), ("Sent their settings", "with_settings", \.withSettings),
            ("Notifications disabled", "notifications_disabled", \.notificationsDisabled),
            ("Provisional authorization", "provisional", \.provisional),
            ("Notification Summary on", "scheduled_delivery", \.scheduledDelivery),
            ("Time-sensitive off", "time_sensitive_disabled", \.timeSensitiveDisabled),
        ]
        audience = audienceRows.map { name, key, path in
            Figure(name: name, key: key, value: String(figures.audience[keyPath: path]), previous: String(before.audience[keyPath: path]))
        }
        audienceChart =
            BarChart(
                id: "audience-chart", title: "Devices by notification settings, \(figures.period.label) against \(before.period.label)",
                rows: audienceRows.map { name, _, path in
                    let now = figures.audience[keyPath: path]
                    let was = before.audience[keyPath: path]
                    return BarChart.Row(
                        label: name, value: Double(now), before: Double(was), valueText: String(now), beforeText: String(was))
                }, legend: legend
            ).svg
    }
}
