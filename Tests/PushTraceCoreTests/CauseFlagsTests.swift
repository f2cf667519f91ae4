import PushTraceRecords
import Testing

@testable import PushTraceCore

/// The flags settling decides causes from: what each event sets, and how the store keeps them.
@Suite("Cause flags")
struct CauseFlagsTests {
    static let events: [EventName] = [
        .pushSent, .pushAPNsResponse, .serviceReceived, .serviceDownload, .serviceAttachment, .serviceDelivered,
        .serviceExpired, .serviceAbnormalExit, .contentReceived, .contentImage, .contentAction,
        .contentCompletionTimeout, .contentAbnormalExit, .sharedWrite, .sharedRead, .appWillPresent, .appResponse,
        "app.custom_step",
    ]

    @Test("an event counts as shown exactly when the rules' shownOnDevice holds it")
    func shownMatchesTheRules() {
        for event in Self.events {
            var flags = CauseFlags()
            let record = Record(ts: 1, process: .content, event: event)
            flags.add(event: event, of: record, ts: 1, fromDevice: true)
            #expect(flags.contains(.shown) == EventName.shownOnDevice.contains(event), "\(event)")
        }
    }

    @Test("kept as the bits that differ from an ordinary notification's: an ordinary one with an image URL is 1")
    func storedValue() {
        let ordinary: CauseFlags = [.event, .deviceEvent, .eventFromDevice, .firstTsIsEvent, .sent, .sentNamesDevice, .shown]
        #expect(ordinary.storedValue == 0)
        var sent = CauseFlags()
        var push = Record(ts: 1, process: .server, event: .pushSent)
        push.attachmentURL = "https://cdn.example.com/a.jpg"
        sent.add(event: .pushSent, of: push, ts: 1, fromDevice: false)
        #expect(sent.contains(.sent) && sent.urlKind == .image)
        #expect(ordinary.union(sent).storedValue == 1)
        for value: Int64 in [0, 1, 5, 2048, 1 << 20] {
            #expect(CauseFlags(storedValue: value).storedValue == value)
        }
        // What a summary stored before the flags existed holds: settled from its records.
        #expect(CauseFlags(storedValue: 2048).contains(.ambiguous))
    }

    @Test("a second push.sent makes the flags ambiguous, whether in one bundle or across two")
    func twoPushes() {
        let push = Record(ts: 1, process: .server, event: .pushSent)
        var one = CauseFlags()
        one.add(event: .pushSent, of: push, ts: 1, fromDevice: false)
        #expect(!one.contains(.ambiguous))
        var twice = one
        twice.add(event: .pushSent, of: push, ts: 2, fromDevice: false)
        #expect(twice.contains(.ambiguous))
        var merged = one
        merged.merge(one)
        #expect(merged.contains(.ambiguous))
    }
}
