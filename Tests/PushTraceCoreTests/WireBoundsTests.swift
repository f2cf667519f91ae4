import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

/// Every client-supplied number is bounded before arithmetic, every identifier validated, and a reader of values
/// stored unchecked never traps (docs/security.md).
@Suite("Hostile values")
struct WireBoundsTests {
    static let manifest = #"{"type":"manifest","bundle_id":"b-1","app_id":"net.rorklab.dailypick","device_id":"d-1"}"#
    static func event(_ fields: String, id: String = "n-1", ts: String = "1763622001234") -> String {
        #"{"type":"event","ts":\#(ts),"process":"service","event":"service.received","notification_id":"\#(id)"\#(fields)}"#
    }

    @Test("times outside 2000–2199, durations, sizes and statuses out of range: the line rejected with its reason")
    func outOfRangeRecords() throws {
        let lines =
            [Self.manifest]
            + [
                "9223372036854775807", "-9223372036854775808", "946684799999", "7258118400000", "9007199254740992", "0", "-0",
            ].map { Self.event("", ts: $0) } + [
                #"{"type":"event","ts":1763622001234,"process":"service","event":"service.download","notification_id":"n","url_host":"h","duration_ms":86400001}"#,
                #"{"type":"event","ts":1763622001234,"process":"service","event":"service.expired","notification_id":"n","elapsed_ms":-1}"#,
                #"{"type":"event","ts":1763622001234,"process":"server","event":"push.sent","notification_id":"n","category":"C","mutable_content":true,"has_alert":true,"payload_bytes":4294967297}"#,
                #"{"type":"event","ts":1763622001234,"process":"server","event":"push.apns_response","notification_id":"n","status":1000}"#,
                #"{"type":"event","ts":1763622001234,"process":"content","event":"content.completion_timeout","notification_id":"n","action":"A","waited_ms":9223372036854775807}"#,
            ]
        let decoded = Decoded(Fixture.text(lines))
        #expect(decoded.error == nil)
        #expect(decoded.records.isEmpty, "\(decoded.records.map(\.json))")
        #expect(decoded.rejected.count == lines.count - 1)
        for rejected in decoded.rejected {
            #expect(rejected.reason.contains("out of range") || rejected.reason.contains("negative"), "\(rejected.reason)")
        }
        // The edges themselves are in range, and seconds are still named as such.
        let edges = Decoded(
            Fixture.text([
                Self.manifest, Self.event("", ts: "946684800000"), Self.event("", ts: "7258118399999"),
                Self.event("", ts: "1763622001"),
            ]))
        #expect(edges.records.count == 2)
        #expect(edges.rejected.first?.reason.contains("looks like seconds") == true)
    }

    @Test("a manifest's uploaded_at out of range, an app_id that is no bundle identifier, a device_id with ESC: refused whole")
    func manifests() {
        for manifest in [
            #"{"type":"manifest","bundle_id":"b","app_id":"net.x","uploaded_at":9223372036854775807}"#,
            #"{"type":"manifest","bundle_id":"b","app_id":"net.x","uploaded_at":100000000000}"#,
            #"{"type":"manifest","bundle_id":"b","app_id":"net.x\n2026 forged"}"#,
            #"{"type":"manifest","bundle_id":"b","app_id":"\#(String(repeating: "a", count: 256))"}"#,
            #"{"type":"manifest","bundle_id":"b","app_id":"net.x","device_id":"d\u001b[2J"}"#,
            #"{"type":"manifest","bundle_id":"b\u0007","app_id":"net.x"}"#,
        ] {
            let decoded = Decoded(Fixture.text([manifest]))
            #expect(decoded.error?.kind == .undecodable, "\(manifest.prefix(60))")
        }
    }

    @Test("notification IDs and categories: printable, 255 bytes at most")
    func identifiers() {
        let decoded = Decoded(
            Fixture.text([
                Self.manifest, Self.event("", id: #"n\n1"#), Self.event("", id: String(repeating: "x", count: 256)),
                Self.event(#","category":"C\u001b[31m""#), Self.event("", id: "\u{202E}evil"), Self.event(#","category":"DAILY""#),
            ]))
        #expect(decoded.records.count == 1)
        #expect(
            decoded.rejected.map(\.reason).allSatisfy { $0.contains("control character") || $0.contains("characters long") },
            "\(decoded.rejected.map(\.reason))")
    }

    @Test("instants people type are bounded too")
    func instants() {
        for text in [
            "-9223372036854775808", "9223372036854775807", "1e308", "-0", "0", "99999-01-01", "1800-01-01",
            String(repeating: "9", count: 100),
        ] {
            #expect(InstantText.parse(text) == nil, "\(text)")
        }
        #expect(InstantText.parse("2026-11-25") == 1_795_564_800_000)
        #expect(InstantText.format(Int64.max) == "out of range (9223372036854775807)")
    }

    @Test("clock correction, alert spans and rule bounds never trap at Int64's ends")
    func arithmetic() {
        #expect(ClockCorrection.offset(receivedAt: Int64.min, uploadedAt: Int64.max) == 0)
        #expect(ClockCorrection.offset(receivedAt: Int64.max, uploadedAt: Int64.min) == 0)
        #expect(ClockCorrection.corrected(Int64.max, by: 10) == Int64.max)
        #expect(ClockCorrection.corrected(Int64.min, by: -10) == Int64.min)
        let spans = AlertSpans(rule: AlertRule.builtIn[0], now: Int64.min)
        #expect(spans.windowStart == Int64.min && spans.baselineStart == Int64.min)
        var rule = AlertRule.builtIn[0]
        rule.windowMinutes = Int.max
        rule.baselineDays = Int.max
        #expect(rule.problems.count == 2)
        _ = AlertSpans(rule: rule, now: Int64.max)
    }

    @Test("a timeline stored unchecked (Int64's ends in times, durations and sizes) is diagnosed and shown, not trapped on")
    func storedUnchecked() throws {
        func entry(_ json: String, ts: Int64, deviceTs: Int64? = nil) throws -> TimelineEntry {
            TimelineEntry(ts: ts, deviceTs: deviceTs, record: try JSONDecoder().decode(Record.self, from: Data(json.utf8)), json: json)
        }
        let entries = [
            try entry(
                #"{"type":"event","ts":1763622000000,"process":"server","event":"push.sent","notification_id":"n","category":"C","mutable_content":true,"has_alert":true,"payload_bytes":9223372036854775807}"#,
                ts: 1_763_622_000_000),
            try entry(
                #"{"type":"event","ts":9223372036854775807,"process":"server","event":"push.apns_response","notification_id":"n","status":200}"#,
                ts: Int64.max),
            try entry(
                #"{"type":"event","ts":1763622000500,"process":"service","event":"service.received","notification_id":"n"}"#,
                ts: Int64.min, deviceTs: 1_763_622_000_500),
            try entry(
                #"{"type":"event","ts":1763622000600,"process":"service","event":"service.download","notification_id":"n","url_host":"h","duration_ms":9223372036854775807,"bytes":9223372036854775807}"#,
                ts: 1_763_622_000_600),
            try entry(
                #"{"type":"event","ts":1763622000700,"process":"service","event":"service.expired","notification_id":"n","elapsed_ms":9223372036854775807}"#,
                ts: 1_763_622_000_700),
            try entry(
                #"{"type":"event","ts":1763622000900,"process":"content","event":"content.completion_timeout","notification_id":"n","action":"A","waited_ms":-9223372036854775808}"#,
                ts: 1_763_622_000_900),
        ]
        let input = DiagnosisInput(appID: "net.x", notificationID: "n", entries: entries, deviceLastSeen: Int64.max)
        let report = WhyReport(input: input, diagnosis: Diagnoser().diagnose(input))
        let text = report.text
        #expect(text.contains("time out of range: 9223372036854775807"), "\(text)")
        #expect(text.contains("9223372036854775807 ms (out of range)"))
        guard case .object(let document) = report.jsonValue, case .array(let timeline) = document["timeline"] else {
            Issue.record("no timeline")
            return
        }
        let apns = timeline.first { $0.objectValue?["event"] == "push.apns_response" }?.objectValue
        #expect(apns?["ts"] == .int(Int64.max))
        #expect(apns?["out_of_range"] == .array(["ts"]))
    }

    @Test("what a device sent shows escaped in text; JSON keeps it exact")
    func terminalText() throws {
        #expect(TerminalText.escaped("plain text, ünïcode") == "plain text, ünïcode")
        #expect(
            TerminalText.escaped("\u{1B}]0;title\u{7}\u{1B}[2K\rOVERWRITTEN\n")
                == #"\e]0;title\u{7}\e[2K\rOVERWRITTEN\n"#)
        #expect(TerminalText.escaped("a\u{9B}b\u{202E}c\u{2028}d\u{7F}") == #"a\u{9B}b\u{202E}c\u{2028}d\u{7F}"#)
        let json =
            #"{"type":"event","ts":1763622000500,"process":"service\u001b[31m","event":"service.received","notification_id":"n","category":"C\u001b]0;x\u0007"}"#
        let entry = TimelineEntry(ts: 1_763_622_000_500, record: try JSONDecoder().decode(Record.self, from: Data(json.utf8)), json: json)
        let input = DiagnosisInput(appID: "net.x", notificationID: "n\u{1B}", entries: [entry])
        let report = WhyReport(input: input, diagnosis: Diagnoser().diagnose(input))
        #expect(!report.text.unicodeScalars.contains { TerminalText.isHidden($0) && $0 != "\n" }, "\(report.text)")
        #expect(report.text.contains(#"category=C\e]0;x\u{7}"#))
        #expect(report.jsonValue.jsonText().contains(#"C\u001b]0;x\u0007"#))
    }
}

private extension JSONValue {
    var objectValue: [String: JSONValue]? {
        if case .object(let fields) = self { return fields }
        return nil
    }
}
