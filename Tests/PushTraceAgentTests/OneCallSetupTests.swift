import Foundation
import Testing

@testable import PushTraceAgent

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `PushTrace.configure` and the service extension's base class, on real files and a real HTTP server.
@Suite("Agent: one-call set-up and the service-extension base class")
struct OneCallSetupTests {
    @Test(
        "set-up touches no disk on the calling thread: configure and a whole flow return while the agent's queue is held, then every line is written in order"
    )
    @MainActor
    func setUpTouchesNoDisk() throws {
        #expect(Recorder.isMain)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-setup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = PushTrace.Configuration(
            appGroup: "group.net.rorklab.dailypick", server: URL(string: "https://pushtrace.example.com")!, token: "pt_x",
            appID: "net.rorklab.dailypick")
        // Every disk step of the agent waits behind this: a call that did one on this thread, or waited for one,
        // would hang here (and the test with it) or leave the folder made.
        Recorder.disk.suspend()
        var held = true
        defer { if held { Recorder.disk.resume() } }
        PushTrace.configure(configuration, directory: directory, process: .app)
        PushTrace.configure(configuration, directory: directory, process: .app)  // idempotent
        let recorder = try #require(PushTrace.recorder)
        recorder.config(appGroup: configuration.appGroup, categories: [CategoryConfig(id: "DAILY_PICK", actions: ["SAVE_PICK"])])
        recorder.app.willPresent("n-1", options: ["banner", "sound"])
        recorder.app.response("n-1", action: "SAVE_PICK")
        #expect(!FileManager.default.fileExists(atPath: directory.path), "the container's folders were made on the calling thread")
        Recorder.disk.resume()
        held = false
        #expect(Recorder.waitUntilWritten(timeout: 30))
        #expect(recorder.container?.root == directory.appendingPathComponent("pushtrace", isDirectory: true))
        let lines = try ["sealed", "records"].flatMap { folder -> [[String: Any]] in
            let url = directory.appendingPathComponent("pushtrace/\(folder)")
            return try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().flatMap {
                try TemporaryContainer.parse(Data(contentsOf: url.appendingPathComponent($0)), file: $0)
            }
        }
        #expect(lines.map { ($0["event"] as? String) ?? ($0["type"] as? String) ?? "" } == ["config", "app.will_present", "app.response"])
        #expect(PushTrace.version.split(separator: ".").count == 3)
    }

    @Test("the service-extension base class records a full flow: received, the payload's image downloaded and attached, delivered once")
    func baseClassFlow() async throws {
        let temporary = try TemporaryContainer()
        let server = try StaticServer(files: ["pick.png": Data(repeating: 0x89, count: 4_096)])
        defer { server.stop() }
        let recorder = try Recorder(process: .service, container: temporary.container)
        let payload: [AnyHashable: Any] = [
            "aps": ["alert": ["title": "Today's pick"], "mutable-content": 1, "category": "DAILY_PICK"],
            "image-url": server.url("pick.png").absoluteString,
        ]
        let delivered = Shared<[Card]>([])
        // What PushTraceServiceExtension.didReceive does, with a plain value for Apple's content; the class itself
        // runs in scripts/check-apple-build.sh (Tests/AppleSDKStandIn/Run), over the UserNotifications stand-in.
        let handle = ServiceHandle(
            trace: recorder.service.begin("n-1", category: "DAILY_PICK"), original: Card(), copy: { $0 },
            contentHandler: { delivered.value.append($0) })
        let content = await handle.contentWithMedia(from: MediaURL.find(in: payload)) { media in
            handle.trace.attachment(ok: true, uti: "public.png", bytes: media.bytes)
            return Card(attachment: media.file)
        }
        handle.deliver(content)
        handle.expire()  // too late: delivered once
        #expect(delivered.value.count == 1)
        let file = try #require(delivered.value.first?.attachment)
        #expect(file.pathExtension == "png" && FileManager.default.fileExists(atPath: file.path))
        let events = try temporary.recordLines().filter { $0["notification_id"] as? String == "n-1" }
        #expect(
            events.compactMap { $0["event"] as? String } == [
                "service.received", "service.download", "service.attachment", "service.delivered",
            ])
        let download = try #require(events.first { $0["event"] as? String == "service.download" })
        #expect(
            download["http_status"] as? Int == 200 && download["bytes"] as? Int == 4_096 && download["url_host"] as? String == "127.0.0.1")
        #expect(recorder.notificationsInFlight.isEmpty)

        // A payload whose image is missing: the download says 404, and the original content is delivered.
        let missing = ServiceHandle(
            trace: recorder.service.begin("n-2", category: "DAILY_PICK"), original: Card(), copy: { $0 },
            contentHandler: { delivered.value.append($0) })
        missing.deliver(await missing.contentWithMedia(from: server.url("gone.png")) { _ in Card(attachment: URL(fileURLWithPath: "/")) })
        #expect(delivered.value.count == 2 && delivered.value[1].attachment == nil)
        let second = try temporary.recordLines().filter { $0["notification_id"] as? String == "n-2" }
        #expect(second.compactMap { $0["event"] as? String } == ["service.received", "service.download", "service.delivered"])
        #expect(second.first { $0["event"] as? String == "service.download" }?["http_status"] as? Int == 404)
    }

    @Test("the media URL is found where push services put it, and only an http(s) URL")
    func mediaURL() {
        let url = "https://cdn.rorklab.net/p.jpg"
        for payload: [AnyHashable: Any] in [
            ["image-url": url], ["media_url": url], ["attachment-url": ["url": url]], ["att": ["id": url]],
            ["fcm_options": ["image": url]],
        ] {
            #expect(MediaURL.find(in: payload)?.absoluteString == url, "\(payload)")
        }
        #expect(MediaURL.find(in: ["image-url": "file:///etc/passwd"]) == nil)
        #expect(MediaURL.find(in: ["aps": ["alert": "hi"]]) == nil)
    }

    @Test("the process is read from Info.plist, and an extension's app ID from its bundle identifier")
    func processAndAppID() {
        func info(_ point: String?) -> [String: Any] {
            var info: [String: Any] = ["CFBundleIdentifier": "net.rorklab.dailypick" + (point == nil ? "" : ".Extension")]
            if let point { info["NSExtension"] = ["NSExtensionPointIdentifier": point] }
            return info
        }
        #expect(ProcessKind.running(info(nil)) == .app)
        #expect(ProcessKind.running(info("com.apple.usernotifications.service")) == .service)
        #expect(ProcessKind.running(info("com.apple.usernotifications.content-extension")) == .content)
        #expect(Setup.appID(info: info("com.apple.usernotifications.service"), process: .service) == "net.rorklab.dailypick")
        #expect(Setup.appID(info: info(nil), process: .app) == "net.rorklab.dailypick")
    }
}

/// A stand-in for Apple's notification content: what the handler was given.
struct Card: Sendable {
    var attachment: URL?
}

/// Python's `http.server` on a free loopback port, serving `files` from a folder of its own.
final class StaticServer: Sendable {
    let port: Int
    private let process: Process
    private let folder: URL

    init(files: [String: Data]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-static-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        var text = ""
        while !text.contains(") ...") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let found = text.split(separator: " ").drop(while: { $0 != "port" }).dropFirst().first, let port = Int(found) else {
            process.terminate()
            throw AgentError.badConfiguration("python3 -m http.server did not start: \(text)")
        }
        self.port = port
    }

    func url(_ name: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(name)")! }

    func stop() {
        process.terminate()  // Foundation reaps it; waitUntilExit would spin a run loop this thread does not run
        try? FileManager.default.removeItem(at: folder)
    }
}
