import PushTraceCore
import PushTraceRecords

/// `GET /ui/notifications/{id}`: the `why` answer (cause, findings with evidence and fixes) and the timeline as a
/// waterfall and a table. While the answer can still change, the page follows the notification live.
public struct NotificationPage: Sendable {
    struct FindingRow: Sendable {
        var code: String
        var message: String
        var fix: String
        var evidence: [String]
        var hasEvidence: Bool
        var evidenceCount: Int
        var related: String?
        var relatedURL: String?
    }

    struct Entry: Sendable {
        var offset: String
        var process: String
        var event: String
        var detail: String
        var lane: String
    }

    var id: String
    var app: String
    var cause: String
    var family: String
    var tone: String
    var findings: [FindingRow]
    var cut: String?
    var hasTimeline: Bool
    var waterfall: String
    var origin: String
    var entries: [Entry]
    /// How many records the page shows, for the live script to tell whether the stream brings anything new.
    var recordCount: Int
    /// Whether the page follows the notification live, and the stream it listens to.
    public private(set) var follow: Bool
    var eventsURL: String
    var liveText: String

    public init(report: WhyReport) {
        id = HTMLText.visible(report.notificationID)
        app = HTMLText.visible(report.appID.isEmpty ? "no app" : report.appID)
        cause = report.diagnosis.cause.rawValue
        family = report.diagnosis.cause.family
        tone =
            report.mayStillChange ? "wait" : report.diagnosis.cause == .ok ? "good" : "bad"
        findings = report.diagnosis.findings.map { finding in
            let evidence = finding.evidence.map { HTMLText.visible($0.jsonValue.jsonText(pretty: false)) }
            return FindingRow(
                code: finding.code.rawValue, message: HTMLText.visible(finding.message), fix: HTMLText.visible(finding.fix),
                evidence: evidence, hasEvidence: !evidence.isEmpty, evidenceCount: evidence.count,
                related: finding.related.map(HTMLText.visible),
                relatedURL: finding.related.map { ConsoleURL.notification($0, app: report.appID) })
        }
        cut = report.timelineCut.map { HTMLText.visible($0.message) }
        hasTimeline = !report.timeline.isEmpty
        waterfall = Waterfall(timeline: report.timeline).svg
        let origin = report.timeline.first?.ts ?? 0
        self.origin = UTCText.readable(origin)
        entries = report.timeline.map { entry in
            var detail = entry.detail
            if let deviceTs = entry.deviceTs { detail += (detail.isEmpty ? "" : " ") + "[device clock \(UTCText.readable(deviceTs))]" }
            return Entry(
                offset: entry.outOfRangeTs == nil ? "+" + Waterfall.duration(entry.ts - origin) : "?",
                process: HTMLText.visible(entry.record.process ?? "?"),
                event: HTMLText.visible(entry.record.event ?? entry.record.type ?? "?"),
                detail: HTMLText.visible(detail), lane: Waterfall.lane(of: entry))
        }
        recordCount = report.timeline.count
        follow = report.mayStillChange
        eventsURL = ConsoleURL.link(
            "/v1/notifications/" + ConsoleURL.component(report.notificationID) + "/events",
            [("app", report.appID.isEmpty ? nil : report.appID)])
        liveText = follow ? "Following live: new records and the cause appear here as they are uploaded." : ""
    }
}
