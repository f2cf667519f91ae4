import PushTraceCore
import PushTraceStore

/// `GET /ui/`: the last 24 hours by cause, the alerts firing now, and the way in to a notification.
public struct OverviewPage: Sendable {
    struct CauseRow: Sendable {
        var cause: String
        var count: Int
        var searchURL: String
    }

    var app: String?
    var sinceText: String
    var causes: [CauseRow]
    var hasCauses: Bool
    var causesChart: String
    var alertList: AlertList
    var form: SearchForm

    /// `counts` of the viewer's apps (every app for an admin), settled since `since`.
    public init(app: String?, counts: [CauseCount], since: Int64, alerts report: AlertReport, form: SearchForm) {
        self.app = app.map(HTMLText.visible)
        sinceText = UTCText.readable(since)
        var byCause: [String: Int] = [:]
        for count in counts { byCause[count.cause, default: 0] += count.count }
        let sorted = byCause.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        let sinceISO = UTCText.iso(since)
        causes = sorted.map { cause, count in
            CauseRow(
                cause: HTMLText.visible(cause), count: count,
                searchURL: ConsoleURL.link("/ui/search", [("cause", cause), ("app", app), ("since", sinceISO)]))
        }
        hasCauses = !causes.isEmpty
        causesChart =
            BarChart(
                id: "causes-24h", title: "Notifications by cause, last 24 hours",
                rows: sorted.map { BarChart.Row(label: $0.key, value: Double($0.value), valueText: String($0.value)) }
            ).svg
        alertList = AlertList(report)
        self.form = form
    }
}
