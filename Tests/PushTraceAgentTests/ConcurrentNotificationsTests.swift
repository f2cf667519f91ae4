import Foundation
import PushTraceAgent
import Testing

/// iOS runs one service-extension process for several notifications, sometimes at once, with a new
/// `NotificationService` per notification; and two processes of one kind can be alive together. Real files, real
/// OS processes (`pushtrace-agent-probe`).
@Suite("Agent: notifications in flight at once")
struct ConcurrentNotificationsTests {
    static let ok = Probe.Ending(status: 0, signalled: false)

    /// Every event name in the container, with how many times it was recorded, per notification.
    static func events(_ temporary: TemporaryContainer) throws -> [String: [String: Int]] {
        try temporary.recordLines().reduce(into: [:]) { result, line in
            guard let event = line["event"] as? String, let id = line["notification_id"] as? String else { return }
            result[event, default: [:]][id, default: 0] += 1
        }
    }

    @Test(
        "2 and 10 notifications at once in this process, on the shared recorder, while another recorder starts: every record, no abnormal exit",
        arguments: [2, 10])
    func inThisProcess(count: Int) async throws {
        let temporary = try TemporaryContainer()
        let recorder = try Recorder.shared(.service, container: temporary.container)
        #expect(try Recorder.shared(.service, container: temporary.container) === recorder)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    let trace = recorder.service.begin("n-\(index)", category: "DAILY_PICK")
                    trace.download(host: "cdn.rorklab.net", durationMs: 100, httpStatus: 200)
                    try? await Task.sleep(for: .milliseconds(50))
                    #expect(trace.delivered())
                    #expect(!trace.delivered() && !trace.expired())  // ends once
                }
            }
            // A second recorder of the same kind starting meanwhile judges nothing that is alive.
            group.addTask { _ = try? Recorder(process: .service, container: temporary.container) }
        }
        #expect(recorder.notificationsInFlight.isEmpty)
        _ = try Recorder(process: .service, container: temporary.container)
        let events = try Self.events(temporary)
        for name in ["service.received", "service.download", "service.delivered"] {
            #expect(events[name] == Dictionary(uniqueKeysWithValues: (0..<count).map { ("n-\($0)", 1) }), "\(name)")
        }
        #expect(events["service.abnormal_exit"] == nil)
    }

    @Test(
        "2 and 10 notifications at once in one service-extension process, then two such processes at once: every record, no abnormal exit",
        arguments: [2, 10])
    func inProcesses(count: Int) async throws {
        let temporary = try TemporaryContainer()
        let path = temporary.directory.path
        #expect(try await Probe.run(["concurrent", path, String(count), "200"]) == Self.ok)
        // Two processes of one kind alive together: each starts while the other has notifications in flight.
        let endings = try await withThrowingTaskGroup(of: Probe.Ending.self) { group in
            for _ in 0..<2 { group.addTask { try await Probe.run(["concurrent", path, String(count), "600"]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(endings == [Self.ok, Self.ok])
        #expect(try await Probe.run(["launch", path, "service"]) == Self.ok)
        let events = try Self.events(temporary)
        #expect(events["service.abnormal_exit"] == nil)
        for name in ["service.received", "service.download", "service.attachment", "service.delivered"] {
            let counts = events[name] ?? [:]
            #expect(counts.count == 3 * count && counts.values.allSatisfy { $0 == 1 }, "\(name): \(counts)")
        }
        // Every ended launch's file was sealed; the last launch's own file is the only one left open.
        #expect(temporary.files("records").count == 1)
    }

    @Test("a process killed with notifications in flight: an abnormal exit for each of them, and nothing else")
    func killedWithSeveralInFlight() async throws {
        let temporary = try TemporaryContainer()
        let path = temporary.directory.path
        let crash = try await Probe.run(["crash-many", path, "6"])  // begins k-0 … k-5, delivers k-0, SIGKILL
        #expect(crash.signalled)
        #expect(try await Probe.run(["launch", path, "service"]) == Self.ok)
        #expect(try await Probe.run(["launch", path, "service"]) == Self.ok)  // a later launch reports nothing again
        let exits = try Self.events(temporary)["service.abnormal_exit"] ?? [:]
        #expect(exits == ["k-1": 1, "k-2": 1, "k-3": 1, "k-4": 1, "k-5": 1])
        let lines = try temporary.recordLines().filter { $0["event"] as? String == "service.abnormal_exit" }
        #expect(
            lines.allSatisfy { $0["process"] as? String == "service" && (($0["last_footprint_bytes"] as? NSNumber)?.intValue ?? 0) > 0 })
    }

    @Test("a write the disk cuts short is truncated back: no half line, the next record starts clean, and the lost ones are counted")
    func partialWrite() async throws {
        let temporary = try TemporaryContainer()
        #expect(try await Probe.run(["partial", temporary.directory.path]) == Self.ok)
        let files = temporary.files("records")
        #expect(files.count == 1)
        let data = try Data(contentsOf: temporary.root.appendingPathComponent("records").appendingPathComponent(files[0]))
        #expect(data.last == UInt8(ascii: "\n"))
        let lines = try TemporaryContainer.parse(data, file: files[0])  // every line whole JSON, or this throws
        let written = lines.compactMap { $0["message"] as? String }.filter { $0.hasPrefix("partial line ") }.count
        let notice = try #require(lines.first { $0["dropped_records"] != nil })
        #expect(written + ((notice["dropped_records"] as? NSNumber)?.intValue ?? 0) == 40)
        #expect(written > 0 && written < 40)
        #expect(lines.last?["message"] as? String == "after the limit")
    }
}
