import Foundation
import PushTraceAgent
import PushTraceRecords
import Testing

@Suite("Agent: the recorder")
struct RecorderTests {
    @Test("several OS processes append to one container at once, and every line stays whole")
    func concurrentProcesses() async throws {
        let temporary = try TemporaryContainer()
        let path = temporary.directory.path
        // Two of one kind too: two service-extension processes alive at once, neither taking the other's file.
        let writers = [("app", "A"), ("service", "S"), ("content", "C"), ("service", "T")]
        let count = 6_000
        let endings = try await withThrowingTaskGroup(of: Probe.Ending.self) { group in
            for (process, tag) in writers {
                group.addTask { try await Probe.run(["flood", path, process, String(count), tag]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(endings.allSatisfy { $0 == Probe.Ending(status: 0, signalled: false) })
        let lines = try temporary.recordLines()
        for (_, tag) in writers {
            let indices = lines.compactMap { $0["message"] as? String }.filter { $0.hasPrefix("\(tag) line ") }
                .map { Int($0.split(separator: " ")[2])! }
            #expect(indices.sorted() == Array(0..<count), "writer \(tag)")
        }
        // 6,000 lines of about 230 bytes each (1.4 MB): every writer sealed a file at 1 MiB on the way.
        #expect(temporary.files("sealed").count >= writers.count)
    }

    @Test("a file over its bound is sealed; over the total bound the oldest go, and a record counts what was dropped")
    func bounds() throws {
        let temporary = try TemporaryContainer()
        let limits = RecorderLimits(maxFileBytes: 10_000, maxTotalBytes: 50_000)
        let recorder = try Recorder(process: .service, container: temporary.container, limits: limits)
        let written = 2_000
        for index in 0..<written { recorder.log("line \(index) " + String(repeating: "y", count: 60)) }
        let lines = try temporary.recordLines()
        let kept = lines.compactMap { $0["message"] as? String }.filter { $0.hasPrefix("line ") }.count
        let drops = lines.filter { $0["dropped_records"] != nil }
        let dropped = drops.compactMap { ($0["dropped_records"] as? NSNumber)?.intValue }.reduce(0, +)
        #expect(!drops.isEmpty)
        #expect(drops.allSatisfy { $0["level"] as? String == "warning" && ($0["message"] as? String)?.contains("dropped") == true })
        // Every record is either still there or counted as dropped: nothing vanishes unaccounted.
        #expect(kept + dropped == written)
        let bytes = try ["records", "sealed"].flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: temporary.root.appendingPathComponent(folder).path)
                .map { temporary.root.appendingPathComponent(folder).appendingPathComponent($0) }
        }.reduce(0) { $0 + (try Data(contentsOf: $1)).count }
        #expect(bytes <= 50_000 + 10_000)
        #expect(temporary.files("records").count == 1)
    }

    @Test("a service extension killed mid-notification is reported as service.abnormal_exit at its next launch")
    func abnormalExit() async throws {
        let temporary = try TemporaryContainer()
        let path = temporary.directory.path
        let crash = try await Probe.run(["crash", path, "service", "B7D4A7F0-5A9C-4C55-9C52-1B2C3D4E5F60"])
        #expect(crash.signalled)
        #expect(try temporary.recordLines().allSatisfy { $0["event"] as? String != "service.abnormal_exit" })
        #expect(try await Probe.run(["launch", path, "service"]) == Probe.Ending(status: 0, signalled: false))
        let exits = try temporary.recordLines().filter { $0["event"] as? String == "service.abnormal_exit" }
        #expect(exits.count == 1)
        #expect(exits.first?["notification_id"] as? String == "B7D4A7F0-5A9C-4C55-9C52-1B2C3D4E5F60")
        #expect(((exits.first?["last_footprint_bytes"] as? NSNumber)?.intValue ?? 0) > 0)
        // The previous launch's file was sealed by the new one; a launch after a clean run reports nothing.
        #expect(try await Probe.run(["service", path, "n-clean", "ok"]) == Probe.Ending(status: 0, signalled: false))
        #expect(try await Probe.run(["launch", path, "service"]) == Probe.Ending(status: 0, signalled: false))
        #expect(try temporary.recordLines().filter { $0["event"] as? String == "service.abnormal_exit" }.count == 1)
        #expect(temporary.files("records").count == 1)
    }

    @Test("the action completion wrapper records the answer once, or content.completion_timeout when it never comes")
    func actionCompletion() async throws {
        let temporary = try TemporaryContainer()
        let recorder = try Recorder(process: .content, container: temporary.container)
        let answered = recorder.content.completion("n-1", action: "SAVE_PICK", timeout: 0.3) { _ in }
        answered(.doNotDismiss)
        answered(.dismiss)  // a second call is ignored, as UIKit ignores it
        _ = recorder.content.completion("n-2", action: "SHUFFLE_PICK", timeout: 0.2) { _ in }
        try await Task.sleep(for: .milliseconds(800))
        let events = try temporary.recordLines().filter { $0["type"] as? String == "event" }
        let actions = events.filter { $0["event"] as? String == "content.action" }
        #expect(actions.count == 1)
        #expect(actions.first?["response"] as? String == "doNotDismiss")
        #expect(actions.first?["notification_id"] as? String == "n-1")
        let timeouts = events.filter { $0["event"] as? String == "content.completion_timeout" }
        #expect(timeouts.map { $0["notification_id"] as? String } == ["n-2"])
        #expect(((timeouts.first?["waited_ms"] as? NSNumber)?.intValue ?? 0) >= 200)
    }

    @Test("the content extension's attributes come from a real Info.plist; a config is written again only when it changes")
    func configRecords() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>
              <key>NSExtension</key><dict>
                <key>NSExtensionAttributes</key><dict>
                  <key>UNNotificationExtensionCategory</key><string>DAILY_PICK</string>
                  <key>UNNotificationExtensionInitialContentSizeRatio</key><real>0.66</real>
                  <key>UNNotificationExtensionDefaultContentHidden</key><true/>
                  <key>UNNotificationExtensionUserInteractionEnabled</key><true/>
                </dict>
                <key>NSExtensionPointIdentifier</key><string>com.apple.usernotifications.content-extension</string>
              </dict>
            </dict></plist>
            """
        let dictionary = try #require(try PropertyListSerialization.propertyList(from: Data(plist.utf8), format: nil) as? [String: Any])
        let attributes = try #require(ContentExtensionPlist(infoDictionary: dictionary))
        #expect(
            attributes
                == ContentExtensionPlist(
                    categories: ["DAILY_PICK"], initialContentSizeRatio: 0.66,
                    defaultContentHidden: true, userInteractionEnabled: true))
        #expect(ContentExtensionPlist(infoDictionary: ["CFBundleName": "App"]) == nil)

        let temporary = try TemporaryContainer()
        for categories in [["DAILY_PICK"], ["DAILY_PICK"], ["DAILY_PICK", "WEEKLY"]] {
            let recorder = try Recorder(process: .app, container: temporary.container)
            recorder.config(appGroup: "group.net.rorklab.dailypick", categories: categories.map { CategoryConfig(id: $0) })
        }
        let configs = try temporary.recordLines().filter { $0["type"] as? String == "config" }
        #expect(configs.count == 2)
        #expect((configs.last?["categories"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["DAILY_PICK", "WEEKLY"])
    }

    @Test("records decode with the server's own vocabulary: the agent writes what the server reads")
    func linesDecodeAsRecords() throws {
        let temporary = try TemporaryContainer()
        let recorder = try Recorder(process: .service, container: temporary.container, clock: { 1_763_622_000_000 })
        recorder.service.received("n-1", category: "DAILY_PICK")
        recorder.service.download(
            "n-1", urlHost: "cdn.example.com", durationMs: 420, httpStatus: 200, bytes: 1_000,
            mime: "image/jpeg")
        recorder.shared.read(suite: "group.x", key: "k\n\"quoted\"", found: false, notificationID: "n-1")
        recorder.service.delivered("n-1", elapsedMs: 640, interruptionLevel: InterruptionLevel.timeSensitive.rawValue)
        let settings = NotificationSettings(
            authorization: .provisional, alert: .enabled, lockScreen: .disabled, notificationCenter: .enabled,
            alertStyle: NotificationSettings.AlertStyle.none, scheduledDelivery: .enabled, timeSensitive: .notSupported)
        recorder.config(appGroup: "group.x", notificationSettings: settings)
        recorder.waitUntilWritten()
        let file = try Data(contentsOf: try #require(recorder.currentFile))
        let records = try file.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(Record.self, from: Data($0)) }
        #expect(records.map(\.event) == ["service.received", "service.download", "shared.read", "service.delivered", nil])
        #expect(records.allSatisfy { $0.ts == 1_763_622_000_000 && $0.process == "service" })
        #expect(records.dropLast().allSatisfy { $0.notificationID == "n-1" })
        #expect(records[3].interruptionLevel == "time-sensitive")
        // The settings as the server reads them, every field by the wire's name.
        #expect(records[4].notificationSettings == settings)
        #expect(records[1].httpStatus == 200 && records[1].mime == "image/jpeg")
        #expect(records[2].key == "k\n\"quoted\"" && records[2].found == false)
        for record in records {
            let required = record.eventName.flatMap { EventName.requiredFields[$0] } ?? []
            #expect(required.allSatisfy(record.has), "\(record.event ?? "")")
        }
    }
}
