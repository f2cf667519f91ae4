import PushTraceCore

/// `GET /ui/alerts`: what fires now, each alert linking to the search that shows its notifications.
public struct AlertsPage: Sendable {
    var now: String
    var evaluated: String
    var alertList: AlertList

    public init(report: AlertReport) {
        now = UTCText.readable(report.now)
        evaluated = "\(report.evaluated) rule, app and category \(report.evaluated == 1 ? "window" : "windows") judged"
        alertList = AlertList(report)
    }
}
