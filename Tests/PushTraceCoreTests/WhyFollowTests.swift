import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

/// Live follow worked out from successive answers: each record told once, the answer told when it changes, and
/// the end once it cannot change any more.
@Suite struct WhyFollowTests {
    static func report(_ entries: [TimelineEntry]) -> WhyReport {
        let input = DiagnosisInput(appID: "a", notificationID: "n-1", entries: entries)
        return WhyReport(input: input, diagnosis: Diagnoser().diagnose(input))
    }

    @Test func tellsNewRecordsOnceAndTheAnswerWhenItChanges() {
        var story = Story()
        story.add(0, "server", "push.sent", ["payload_bytes": 700, "mutable_content": true, "has_alert": true])
        var follow = WhyFollow()
        let first = follow.events(for: Self.report(story.entries))
        #expect(first.count == 2)
        #expect(first.first?.name == "record")
        guard case .cause(let answer, let final)? = first.last else {
            Issue.record("no cause told")
            return
        }
        #expect(answer.objectValue?["cause"] == .string("awaiting_device_logs"))
        #expect(answer.objectValue?["timeline"] == nil)
        #expect(!final)
        #expect(follow.events(for: Self.report(story.entries)).isEmpty, "nothing new, nothing told")

        story.add(800, "service", "service.received")
        let running = follow.events(for: Self.report(story.entries))
        #expect(running.map(\.name).contains("record"))
        #expect(Self.report(story.entries).mayStillChange, "the service extension has not finished")

        story.add(30_800, "service", "service.expired", ["elapsed_ms": 30_000])
        let ended = follow.events(for: Self.report(story.entries))
        #expect(ended.filter { $0.name == "record" }.count == 1)
        guard case .cause(let timeout, true)? = ended.last else {
            Issue.record("no final cause: \(ended)")
            return
        }
        #expect(timeout.objectValue?["cause"] == .string("service_timeout"))
        #expect(ended.last?.data.contains("\"final\":true") == true)
    }

    @Test func printsTheStreamForATerminalEscaped() {
        var text = WhyFollowText()
        let record = JSONValue.object([
            "ts": 1000, "process": "service", "event": "service.download", "message": .string("\u{1B}[2Jhi"),
        ])
        let line = text.lines(for: .record(record))
        #expect(line.contains("+0.000s"))
        #expect(line.contains("service.download"))
        #expect(!line.unicodeScalars.contains("\u{1B}"))
        let cause = text.lines(for: .cause(.object(["cause": "ok", "findings": .array([])]), final: true))
        #expect(cause == "cause: ok\n")
    }
}
