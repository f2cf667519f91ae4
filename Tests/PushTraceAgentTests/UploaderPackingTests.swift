import Foundation
import PushTraceAgent
import PushTraceRecords
import Testing

@Suite("Agent: packing bundles for upload")
struct UploaderPackingTests {
    /// An uploader whose server refuses connections, and a clock the test moves.
    static func offlineUploader(_ temporary: TemporaryContainer, clock: Clock) throws -> Uploader {
        let configuration = UploaderConfiguration(
            server: URL(string: "http://127.0.0.1:9")!, token: "pt_test",
            appID: "net.rorklab.dailypick", appVersion: "2.3.1", os: "iOS 18.1")
        return try Uploader(configuration: configuration, container: temporary.container, clock: { clock.now })
    }

    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int64 = 1_763_622_000_000
        var now: Int64 { lock.withLock { value } }
        func advance(seconds: Int64) { lock.withLock { value += seconds * 1000 } }
    }

    /// The lines of every bundle in a folder, in order.
    static func bundleLines(_ temporary: TemporaryContainer, folder: String = "outbox") throws -> [[String: Any]] {
        try temporary.files(folder).filter { $0.hasSuffix(".gz") }.flatMap { name in
            try TemporaryContainer.parse(
                TemporaryContainer.gunzip(
                    Data(
                        contentsOf: temporary.root
                            .appendingPathComponent(folder).appendingPathComponent(name))), file: name)
        }
    }

    @Test("a bundle is written before any attempt; what is packed is never packed again, even after a crash mid-pack")
    func packsOnce() async throws {
        let temporary = try TemporaryContainer()
        let clock = Clock()
        let service = try Recorder(process: .service, container: temporary.container, clock: { clock.now })
        service.config(appGroup: "group.net.rorklab.dailypick")
        service.service.received("n-1")
        service.service.delivered("n-1", elapsedMs: 300)
        let uploader = try Self.offlineUploader(temporary, clock: clock)

        let first = await uploader.upload()
        #expect(first.packed == 1 && first.sent == 0 && first.waiting == 1)
        #expect(first.lastError != nil)
        let waitUntil = try #require(first.nextAttemptAt)
        #expect(waitUntil > clock.now)
        var lines = try Self.bundleLines(temporary)
        #expect(lines.compactMap { $0["event"] as? String } == ["service.received", "service.delivered"])
        // The config record is repeated in the bundle's own member as well as recorded in the file.
        #expect(lines.filter { $0["type"] as? String == "config" }.count == 2)

        // Nothing new: nothing packed. The bundle waits for its backoff, then is tried again (and fails again).
        #expect(await uploader.upload().packed == 0)
        clock.advance(seconds: 3_600)
        let retried = await uploader.upload()
        #expect(retried.packed == 0 && retried.waiting == 1)
        #expect(try #require(retried.nextAttemptAt) > clock.now)

        // A crash after the bundle was written but before the cursors were saved: the next pack applies the
        // bundle's own cursor advances first, so its records are not packed a second time.
        try FileManager.default.removeItem(at: temporary.root.appendingPathComponent("state/cursors.json"))
        service.service.received("n-2")
        clock.advance(seconds: 1)
        #expect(await uploader.upload().packed == 1)
        lines = try Self.bundleLines(temporary)
        #expect(lines.compactMap { $0["event"] as? String } == ["service.received", "service.delivered", "service.received"])
        #expect(lines.compactMap { $0["notification_id"] as? String } == ["n-1", "n-1", "n-2"])
    }

    @Test(
        "an upload cancelled mid-pack (the app's background time expired) lets go of the pack lock within a second; the next pass packs the rest, nothing lost or packed twice"
    )
    func cancelledMidPack() async throws {
        let temporary = try TemporaryContainer()
        let clock = Clock()
        let service = try Recorder(process: .service, container: temporary.container, clock: { clock.now })
        let count = 600
        for index in 0..<count { service.service.received("n-\(index)") }
        var configuration = UploaderConfiguration(
            server: URL(string: "http://127.0.0.1:9")!, token: "pt_test", appID: "net.rorklab.dailypick")
        configuration.maxBundleBytes = 256  // hundreds of bundles: packing takes long enough to be cut short
        let uploader = try Uploader(configuration: configuration, container: temporary.container, clock: { clock.now })
        let bundles: @Sendable () -> Int = { temporary.files("outbox").filter { $0.hasSuffix(".gz") }.count }

        // On the cooperative pool: a pass is cancelled through the task that awaits it. Other tests may hold the
        // pool's threads for minutes, hence the long wait for the pass to begin.
        let pass = Task { await uploader.upload() }
        let released = Shared<TimeInterval>(99)
        let lockFile = temporary.root.appendingPathComponent("state/pack.lock").path
        let ran = await onOwnThread(when: { bundles() >= 2 }, timeout: 600) {
            pass.cancel()
            let cancelled = Date()
            // Another open file description of the lock file: flock refuses it while the pass holds the lock.
            let descriptor = open(lockFile, O_RDWR)
            defer { close(descriptor) }
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0, Date().timeIntervalSince(cancelled) < 10 { usleep(500) }
            released.value = Date().timeIntervalSince(cancelled)
            flock(descriptor, LOCK_UN)
        }
        try #require(ran, "no bundle was written")
        #expect(released.value < 1, "the pack lock was held \(released.value) s after the cancel")
        let interrupted = await pass.value
        let packedBefore = bundles()
        #expect(interrupted.sent == 0)

        // The next pass packs what is left (the server is unreachable: nothing is sent, everything is kept).
        let next = await uploader.upload()
        #expect(next.packed > 0, "the first pass was not cut short: it packed everything")
        #expect(bundles() == packedBefore + next.packed)
        let ids = try Self.bundleLines(temporary).filter { $0["event"] as? String == "service.received" }
            .compactMap { $0["notification_id"] as? String }
        #expect(ids.count == count)
        #expect(Set(ids).count == count)
    }

    @Test("a sealed file is taken whole and deleted once its bundle is written; a running file, up to its last line")
    func sealedAndRunningFiles() async throws {
        let temporary = try TemporaryContainer()
        let clock = Clock()
        let content = try Recorder(process: .content, container: temporary.container, clock: { clock.now })
        content.content.received("n-1")
        content.seal()
        content.content.image("n-1", pixelWidth: 10, pixelHeight: 10)
        // A half-written line at the end of a running file (a writer caught mid-write) is left for later.
        let running = try #require(content.currentFile)
        let handle = try FileHandle(forWritingTo: running)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"type":"log","ts":1,"pro"#.utf8))
        try handle.close()
        #expect(temporary.files("sealed").count == 1)
        #expect(try await Self.offlineUploader(temporary, clock: clock).upload().packed == 1)
        #expect(temporary.files("sealed").isEmpty)
        #expect(try Self.bundleLines(temporary).compactMap { $0["event"] as? String } == ["content.received", "content.image"])
    }

    @Test("the size bound's cleanup never deletes a bundle an upload holds; it deletes the others, counting their records")
    func heldBundleSurvivesCleanup() async throws {
        let temporary = try TemporaryContainer()
        let clock = Clock()
        // Files large enough that the batches roll nothing over (so nothing is cleaned up before packing), a total bound
        // that the two bundles alone exceed.
        let limits = RecorderLimits(maxFileBytes: 8_000, maxTotalBytes: 3_000)
        let recorder = try Recorder(process: .app, container: temporary.container, limits: limits, clock: { clock.now })
        let uploader = try Self.offlineUploader(temporary, clock: clock)
        let outbox = temporary.root.appendingPathComponent("outbox")
        func batch(_ number: Int) async -> String? {
            // Random text, so that each bundle stays large once compressed.
            for index in 0..<30 { recorder.log("batch \(number) line \(index) " + (0..<3).map { _ in UUID().uuidString }.joined()) }
            recorder.seal()
            let before = Set(temporary.files("outbox"))
            _ = await uploader.upload()  // packs a bundle; the server is unreachable, so it waits in the outbox
            return temporary.files("outbox").first { !before.contains($0) && $0.hasSuffix(".json") }
        }
        let first = try #require(await batch(0))
        // That bundle is being sent by an upload (in another process, say): it holds it for a minute.
        let held = outbox.appendingPathComponent(first)
        var metadata = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: held)) as? [String: Any])
        metadata["held_until"] = clock.now + 60_000
        try JSONSerialization.data(withJSONObject: metadata).write(to: held)
        clock.advance(seconds: 1)  // the held bundle is the older: without the hold, the cleanup would take it first
        let second = try #require(await batch(1))
        // Far over the bound: the cleanup deletes sealed files and the other bundle, never the held one.
        for index in 0..<100 { recorder.log("flood \(index) " + String(repeating: "w", count: 80)) }
        #expect(FileManager.default.fileExists(atPath: held.path))
        #expect(FileManager.default.fileExists(atPath: held.deletingPathExtension().appendingPathExtension("gz").path))
        #expect(!temporary.files("outbox").contains(second))
        let dropped = try temporary.recordLines().compactMap { ($0["dropped_records"] as? NSNumber)?.intValue }.reduce(0, +)
        #expect(dropped >= 30)
    }

    @Test("the service extension's own upload, badly configured, is refused and reported; recording goes on")
    func badUploadConfigurationStillRecords() throws {
        let temporary = try TemporaryContainer()
        let service = try Recorder(process: .service, container: temporary.container)
        let bad = UploaderConfiguration(server: URL(string: "ftp://pushtrace.example.com")!, token: "", appID: "a")
        #expect(service.uploadsAfterDelivery(bad, within: 3) == false)
        service.service.received("n-1")
        service.service.delivered("n-1", elapsedMs: 120)
        let events = try temporary.recordLines().compactMap { $0["event"] as? String }
        #expect(events == ["service.received", "service.delivered"])
    }

    @Test("an uploader with an unusable server URL, token or app ID is refused at once, saying which")
    func badConfiguration() throws {
        let temporary = try TemporaryContainer()
        let cases: [(String, String, String, String)] = [
            ("ftp://pushtrace.example.com", "pt_x", "app", "not an http:// or https:// URL"),
            ("pushtrace.example.com", "pt_x", "app", "not an http:// or https:// URL"),
            ("https://pushtrace.example.com", "", "app", "token is empty"),
            ("https://pushtrace.example.com", "pt_x", "", "app ID is empty"),
        ]
        for (server, token, app, message) in cases {
            let configuration = UploaderConfiguration(server: URL(string: server)!, token: token, appID: app)
            do {
                _ = try Uploader(configuration: configuration, container: temporary.container)
                Issue.record("\(server) \(token) \(app) was accepted")
            } catch let error as AgentError {
                #expect(error.description.contains(message), "\(error)")
            }
        }
    }
}
