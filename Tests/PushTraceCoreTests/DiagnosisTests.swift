import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

/// A notification's records, written step by step; starts as a healthy notification (cause `ok`).
struct Story {
    static let t0: Int64 = 1_763_622_000_000
    var entries: [TimelineEntry] = []
    var config = ConfigInForce()
    var deviceLastSeen: Int64?
    var neighbours: DeviceNeighbours?

    static func entry(_ at: Int64, _ process: String, _ type: String = "event", _ fields: [String: JSONValue]) -> TimelineEntry {
        var object = fields
        object["type"] = .string(type)
        object["ts"] = .int(t0 + at)
        object["process"] = .string(process)
        let json = JSONValue.object(object).jsonText(pretty: false)
        let record = try! JSONDecoder().decode(Record.self, from: Data(json.utf8))
        return TimelineEntry(ts: t0 + at, deviceID: process == "server" ? nil : "d-1", record: record, json: json)
    }

    mutating func add(_ at: Int64, _ process: String, _ event: String, _ fields: [String: JSONValue] = [:]) {
        var fields = fields
        fields["event"] = .string(event)
        fields["notification_id"] = "n-1"
        entries.append(Self.entry(at, process, "event", fields))
    }

    mutating func remove(_ event: String) { entries.removeAll { $0.record.event == event } }

    mutating func change(_ event: String, _ fields: [String: JSONValue]) {
        guard let index = entries.firstIndex(where: { $0.record.event == event }) else { return }
        let old = entries[index]
        var object = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(old.json.utf8))) ?? [:]
        for (key, value) in fields { object[key] = value }
        let at = (fields["ts"]?.intValue ?? old.ts) - Self.t0
        entries[index] = Self.entry(at, old.record.process!, old.record.type!, object)
    }

    static var healthy: Story {
        var s = Story()
        s.add(
            0, "server", "push.sent",
            [
                "category": "DAILY_PICK", "mutable_content": true, "has_alert": true,
                "payload_bytes": 900, "device_id": "d-1",
                "attachment_url": "https://img.example.com/p/hero.jpg",
            ])
        s.add(120, "server", "push.apns_response", ["status": 200])
        s.add(800, "service", "service.received", ["category": "DAILY_PICK"])
        s.add(
            1_300, "service", "service.download",
            [
                "url_host": "img.example.com", "duration_ms": 480, "http_status": 200,
                "bytes": 420_000, "mime": "image/jpeg",
            ])
        s.add(1_320, "service", "service.attachment", ["ok": true, "uti": "public.jpeg", "bytes": 420_000])
        s.add(1_340, "service", "service.delivered", ["elapsed_ms": 540])
        s.add(60_000, "content", "content.received", ["category": "DAILY_PICK"])
        s.add(60_100, "content", "content.image", ["pixel_width": 1200, "pixel_height": 800])
        s.add(70_000, "content", "shared.write", ["suite": "group.net.rorklab.dailypick", "key": "saved"])
        s.add(70_150, "content", "content.action", ["action": "SAVE_PICK", "response": "doNotDismiss"])
        s.config = ConfigInForce(
            app: entry(
                -86_400_000, "app", "config",
                [
                    "app_group": "group.net.rorklab.dailypick",
                    "categories": .array([
                        .object(["id": "DAILY_PICK", "actions": .array(["SAVE_PICK", "SHUFFLE_PICK"])]),
                        .object(["id": "STREAK_REMINDER", "actions": .array(["OPEN_STREAK"])]),
                    ]),
                ]),
            service: entry(-86_400_000, "service", "config", ["app_group": "group.net.rorklab.dailypick"]),
            content: entry(
                -86_400_000, "content", "config",
                [
                    "app_group": "group.net.rorklab.dailypick", "interactive_controls": true,
                    "info_plist": .object([
                        "UNNotificationExtensionCategory": "DAILY_PICK",
                        "UNNotificationExtensionUserInteractionEnabled": true,
                    ]),
                ]))
        return s
    }

    var diagnosis: Diagnosis {
        Diagnoser().diagnose(
            DiagnosisInput(
                appID: "net.rorklab.dailypick", notificationID: "n-1", entries: entries,
                config: config, deviceLastSeen: deviceLastSeen, neighbours: neighbours))
    }

    /// Only the backend's two records.
    mutating func serverOnly() { entries.removeAll { $0.record.process != "server" } }
}

@Suite("Diagnosis: every cause of docs/protocol.md#causes")
struct DiagnosisTests {
    @Test func ok() {
        let d = Story.healthy.diagnosis
        #expect(d.cause == .ok)
        #expect(d.findings.count == 1)
    }

    @Test func unknownNotification() {
        #expect(Story().diagnosis.cause == .unknownNotification)
    }

    @Test func apnsRejected() {
        var s = Story.healthy
        s.serverOnly()
        s.change("push.apns_response", ["status": 400, "reason": "BadDeviceToken"])
        let d = s.diagnosis
        #expect(d.cause == .apnsRejected)
        #expect(d.findings[0].message.contains("HTTP 400 (BadDeviceToken)"))
        #expect(d.findings[0].fix.contains("sandbox"))
    }

    @Test func alertMissing() {
        var s = Story.healthy
        s.serverOnly()
        s.change("push.sent", ["has_alert": false])
        #expect(s.diagnosis.cause == .alertMissing)
    }

    @Test func mutableContentMissing() {
        var s = Story.healthy
        s.change("push.sent", ["mutable_content": false])
        for event in ["service.received", "service.download", "service.attachment", "service.delivered"] { s.remove(event) }
        #expect(s.diagnosis.cause == .mutableContentMissing)
    }

    @Test func serviceNotRun() {
        var s = Story.healthy
        for event in ["service.received", "service.download", "service.attachment", "service.delivered"] { s.remove(event) }
        let d = s.diagnosis
        #expect(d.cause == .serviceNotRun)
        #expect(d.findings[0].evidence.map(\.record.event) == ["push.sent", "content.received"])
    }

    @Test func serviceCrashed() {
        var s = Story.healthy
        s.remove("service.delivered")
        s.add(900_000, "service", "service.abnormal_exit", ["last_footprint_bytes": 26_000_000])
        let d = s.diagnosis
        #expect(d.cause == .serviceCrashed)
        #expect(d.findings[0].message.contains("24.8 MB"))
    }

    @Test func serviceTimeoutNamesTheSlowestStep() {
        var s = Story.healthy
        s.change("service.download", ["duration_ms": 28_000])
        s.add(30_700, "service", "service.expired", ["elapsed_ms": 29_900])
        let d = s.diagnosis
        #expect(d.cause == .serviceTimeout)
        #expect(d.findings[0].message.contains("29.9 s"))
        #expect(d.findings[0].message.contains("28.0 s download from img.example.com"))
    }

    @Test(
        "attachment_failed",
        arguments: [
            ("service.download", ["http_status": JSONValue.int(404)], "HTTP 404"),
            ("service.download", ["error": JSONValue.string("The request timed out.")], "timed out"),
            ("service.attachment", ["ok": JSONValue.bool(false), "error": "unrecognized file type"], "could not be created"),
            ("service.attachment", ["bytes": JSONValue.int(12_000_000)], "is 12.0 MB, over the system's 10 MB limit"),
            ("push.sent", ["attachment_url": JSONValue.string("https://img.example.com/p/hero?size=2")], "has no extension"),
        ])
    func attachmentFailed(event: String, fields: [String: JSONValue], says: String) {
        var s = Story.healthy
        s.change(event, fields)
        let d = s.diagnosis
        #expect(d.cause == .attachmentFailed)
        #expect(d.findings[0].message.contains(says), "\(d.findings[0].message)")
    }

    @Test func categoryUnregisteredNamesTheNearest() {
        var s = Story.healthy
        s.change("push.sent", ["category": "DAILY_PIKC"])
        let d = s.diagnosis
        #expect(d.cause == .categoryUnregistered)
        #expect(d.findings[0].message.contains("Did you mean \"DAILY_PICK\"?"))
    }

    @Test func categoryNotHandledNamesTheNearest() {
        var s = Story.healthy
        s.change("push.sent", ["category": "STREAK_REMINDER"])
        let d = s.diagnosis
        #expect(d.cause == .categoryNotHandled)
        #expect(d.findings[0].message.contains("Did you mean \"DAILY_PICK\"?"))
    }

    @Test func interactionDisabled() {
        var s = Story.healthy
        s.config.content = Story.entry(
            -86_400_000, "content", "config",
            [
                "interactive_controls": true,
                "info_plist": .object(["UNNotificationExtensionCategory": .array(["DAILY_PICK"])]),
            ])
        #expect(s.diagnosis.cause == .interactionDisabled)
    }

    @Test func contentCrashed() {
        var s = Story.healthy
        s.add(61_000, "content", "content.abnormal_exit", ["last_footprint_bytes": 130_000_000])
        #expect(s.diagnosis.cause == .contentCrashed)
    }

    @Test func completionNotCalled() {
        var s = Story.healthy
        s.add(71_000, "content", "content.completion_timeout", ["action": "SAVE_PICK", "waited_ms": 5_000])
        #expect(s.diagnosis.cause == .completionNotCalled)
    }

    @Test func dismissedBeforeUpdate() {
        var s = Story.healthy
        s.change("content.action", ["response": "dismiss"])
        let d = s.diagnosis
        #expect(d.cause == .dismissedBeforeUpdate)
        #expect(d.findings[0].message.contains("150 ms later"))
    }

    @Test func dismissLongAfterTheWriteIsFine() {
        var s = Story.healthy
        s.change("content.action", ["response": "dismiss"])
        s.change("shared.write", ["ts": .int(Story.t0 + 60_500)])
        #expect(s.diagnosis.cause == .ok)
    }

    @Test func appGroupMismatch() {
        var s = Story.healthy
        s.add(200_000, "app", "shared.read", ["suite": "group.net.rorklab.dailypick.shared", "key": "saved", "found": false])
        s.config.app = Story.entry(
            -86_400_000, "app", "config",
            [
                "app_group": "group.net.rorklab.dailypick.shared",
                "categories": .array([.object(["id": "DAILY_PICK"])]),
            ])
        let d = s.diagnosis
        #expect(d.cause == .appGroupMismatch)
        #expect(d.findings[0].message.contains("different App Groups"))
    }

    @Test func notDelivered() {
        var s = Story.healthy
        s.serverOnly()
        s.deviceLastSeen = Story.t0 + 45 * 60_000
        let d = s.diagnosis
        #expect(d.cause == .notDelivered)
        #expect(d.findings[0].message.contains("45 min later"))
    }

    @Test func awaitingDeviceLogs() {
        var s = Story.healthy
        s.serverOnly()
        s.deviceLastSeen = Story.t0 + 10 * 60_000  // Seen since, but not 30 minutes after the push.
        #expect(s.diagnosis.cause == .awaitingDeviceLogs)
    }

    @Test func notExpanded() {
        var s = Story.healthy
        for event in ["content.received", "content.image", "shared.write", "content.action"] { s.remove(event) }
        #expect(s.diagnosis.cause == .notExpanded)
    }

    @Test func forwardedActionNeedsTheAppResponse() {
        var s = Story.healthy
        s.change("content.action", ["response": "dismissAndForwardAction"])
        #expect(s.diagnosis.cause == .forwardedActionUnhandled)
        s.add(71_000, "app", "app.response", ["action": "SAVE_PICK"])
        #expect(s.diagnosis.cause == .ok)
    }

    @Test("findings are ordered by priority, the first is the cause")
    func priority() {
        var s = Story.healthy
        s.change("push.sent", ["category": "DAILY_PIKC"])
        s.add(30_700, "service", "service.expired", ["elapsed_ms": 29_900])
        let d = s.diagnosis
        #expect(d.findings.map(\.code) == [.serviceTimeout, .categoryUnregistered])
        #expect(d.cause == .serviceTimeout)
    }

    @Test("every cause has a test, and the order is docs/protocol.md#causes's")
    func order() {
        #expect(Cause.allCases.first == .unknownNotification)
        #expect(Cause.allCases.last == .ok)
        #expect(Cause.serviceTimeout < Cause.attachmentFailed)
    }
}

@Suite("Correlation helpers")
struct CorrelationTests {
    @Test func uuidIDsAreCaseInsensitive() {
        #expect(NotificationKey.normalize("6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10") == "6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10")
        #expect(NotificationKey.normalize("6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10") == "6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10")
        #expect(NotificationKey.normalize("Promo-ABC") == "Promo-ABC")
        #expect(!NotificationKey.isUUID("6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A1G"))
    }

    @Test func clockCorrection() {
        #expect(ClockCorrection.offset(receivedAt: 10_000, uploadedAt: 6_000) == 0)
        #expect(ClockCorrection.offset(receivedAt: 10_000, uploadedAt: 3_610_000) == -3_600_000)
        #expect(ClockCorrection.offset(receivedAt: 10_000, uploadedAt: nil) == 0)
    }

    @Test func editDistance() {
        #expect(EditDistance.between("DAILY_PIKC", "DAILY_PICK") == 2)
        #expect(EditDistance.nearest(to: "DAILY_PIK", in: ["STREAK", "DAILY_PICK"]) == "DAILY_PICK")
    }

    @Test(arguments: [
        ("https://a.b/c/hero.jpg?x=1#y", "hero.jpg"), ("https://a.b", ""), ("https://a.b/", ""), ("https://a.b/c/", "c"),
        ("hero.jpg", "hero.jpg"), ("/a//b", "b"), ("https://a.b?x=/y.jpg", ""), ("", ""),
        ("https://a.b/c/d.png#frag/x", "d.png"), ("ftp://h/é/ü.jpg", "ü.jpg"), ("https://a.b/c/x.jpg//", "x.jpg"),
        ("a://", ""), ("://x/y", "y"), ("https://a.b/p?q#r", "p"), ("s3://bucket/key/with%20space.HEIC", "with%20space.HEIC"),
    ])
    func attachmentFileName(url: String, name: String) {
        // The file name iOS would see: the last non-empty path component, without query or fragment.
        #expect(AttachmentKind.fileName(ofURL: url) == name)
    }

    @Test func attachmentKinds() {
        #expect(AttachmentKind.fileExtension(of: "hero") == "")
        #expect(AttachmentKind(fileExtension: "JPG") == .image)
    }

    @Test("a residual clock error never puts a device step before push.sent")
    func timelineHoldsDeviceStepsBack() {
        var s = Story.healthy
        s.change("service.received", ["ts": .int(Story.t0 - 2_000)])
        let input = DiagnosisInput(appID: "a", notificationID: "n-1", entries: s.entries)
        let report = WhyReport(input: input, diagnosis: Diagnoser().diagnose(input))
        #expect(report.timeline[0].record.event == "push.sent")
        let received = report.timeline.first { $0.record.event == "service.received" }!
        #expect(received.ts == Story.t0)
        #expect(received.deviceTs == Story.t0 - 2_000)
    }
}
