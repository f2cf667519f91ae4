import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import PushTraceAgent
import PushTraceGzip
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The uploader against what real servers and phones do to it: any `Retry-After`, a clock moved backwards, calls
/// that overlap, a cancelled task, and the service extension sending its own records before the app does. A front
/// plays each answer; behind it, a live `pushtrace serve` stores what is forwarded.
@Suite("Agent uploads: hostile answers, clocks, overlaps, the extension's own upload")
struct AgentUploadResilienceTests {
    static let app = AgentEndToEndTests.app

    /// What the front does with one attempt.
    enum Answer: Sendable {
        case forward
        case unavailable(retryAfter: String)
        /// Waits, then forwards (a slow network).
        case delayed(milliseconds: Int)
    }

    /// A front before a live server: it plays `script` (then forwards), and counts the bundle IDs it saw.
    final class Front: Sendable {
        let script = NIOLockedValueBox<[Answer]>([])
        let seen = NIOLockedValueBox<[String: Int]>([:])
        let server: ServerProcess

        init(server: ServerProcess) { self.server = server }

        var router: Router<BasicRequestContext> {
            let router = Router()
            router.post("/v1/bundles") { [self] request, _ -> Response in
                let body = try await request.body.collect(upTo: 16 << 20)
                let data = Data(buffer: body)
                if let id = Self.bundleID(data) { seen.withLockedValue { $0[id, default: 0] += 1 } }
                switch script.withLockedValue({ $0.isEmpty ? Answer.forward : $0.removeFirst() }) {
                case .unavailable(let value):
                    return Response(
                        status: .serviceUnavailable, headers: [.retryAfter: value],
                        body: .init(byteBuffer: ByteBuffer(string: #"{"error":"busy","message":"try later"}"#)))
                case .delayed(let milliseconds):
                    try? await Task.sleep(for: .milliseconds(milliseconds))
                    return try await forward(request, data)
                case .forward:
                    return try await forward(request, data)
                }
            }
            return router
        }

        private func forward(_ request: Request, _ data: Data) async throws -> Response {
            var forwarded = URLRequest(url: URL(string: server.url + "/v1/bundles")!)
            forwarded.httpMethod = "POST"
            forwarded.setValue(request.headers[.authorization], forHTTPHeaderField: "Authorization")
            forwarded.setValue(request.headers[.contentType], forHTTPHeaderField: "Content-Type")
            forwarded.setValue(request.headers[.contentEncoding], forHTTPHeaderField: "Content-Encoding")
            forwarded.httpBody = data
            let (answer, response) = try await URLSession.shared.data(for: forwarded)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 502
            return Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(data: answer)))
        }

        /// Serves the front on a free loopback port while `body` runs, given its URL.
        func serve(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
            try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
                try await body(URL(string: "http://127.0.0.1:\(client.port!)")!)
            }
        }

        /// The `bundle_id` of the manifest, the body's first gzip member.
        static func bundleID(_ body: Data) -> String? {
            var text = Data()
            guard let inflater = try? Inflater(format: .gzip) else { return nil }
            try? body.withUnsafeBytes { try inflater.consume($0) { text.append(contentsOf: $0) } }
            let first = text.split(separator: UInt8(ascii: "\n")).first.map { Data($0) } ?? Data()
            return (try? JSONSerialization.jsonObject(with: first) as? [String: Any])?["bundle_id"] as? String
        }
    }

    /// A store with an ingest token, an App Group container, a live server on the store, and a front before it.
    static func live() async throws -> (WorkFolder, token: String, AgentContainer, ServerProcess, Front) {
        let (work, token, container) = try AgentEndToEndTests.setUp()
        let server = try await ServerProcess(arguments: ["--db", "pushtrace.sqlite"], in: work.url)
        return (work, token, container, server, Front(server: server))
    }

    /// How many times each event of `id` is stored.
    static func stored(_ id: String, in work: WorkFolder) async throws -> [String: Int] {
        let output = try await work.runDetached(["export", "--notification", id])
        var counts: [String: Int] = [:]
        for line in output.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(output.stderr)")
            if let event = object["event"] as? String { counts[event, default: 0] += 1 }
        }
        return counts
    }

    static func serviceRun(_ recorder: Recorder, _ id: String) {
        let trace = recorder.service.begin(id, category: "DAILY_PICK")
        trace.download(host: "cdn.rorklab.net", durationMs: 210, httpStatus: 200, bytes: 90_000, mime: "image/jpeg")
        trace.delivered()
    }

    @Test("Retry-After of inf, 1e20, a 30-digit number, -5, nan and abc: no crash; every wait within the backoff limit")
    func hostileRetryAfter() async throws {
        let (work, token, container, server, front) = try await Self.live()
        let clock = NIOLockedValueBox<Int64>(Int64(Date().timeIntervalSince1970 * 1000))
        let recorder = try Recorder(process: .service, container: container)
        try await front.serve { url in
            var configuration = UploaderConfiguration(server: url, token: token, appID: Self.app)
            configuration.maxBackoff = 600
            let uploader = try Uploader(configuration: configuration, container: container, clock: { clock.withLockedValue { $0 } })
            let values = ["inf", "1e20", "123456789012345678901234567890", "-5", "nan", "abc"]
            for (index, value) in values.enumerated() {
                Self.serviceRun(recorder, "r-\(index)")
                front.script.withLockedValue { $0 = [.unavailable(retryAfter: value)] }
                let now = clock.withLockedValue { $0 }
                let report = await uploader.upload()
                #expect(report.waiting == 1 && report.sent == 0, "Retry-After: \(value): \(report)")
                let wait = (report.nextAttemptAt ?? 0) - now
                #expect(wait >= 1_000 && wait <= 600_000, "Retry-After: \(value) waits \(wait) ms")
                if ["inf", "1e20", "123456789012345678901234567890"].contains(value) { #expect(wait == 600_000, "\(value)") }
                clock.withLockedValue { $0 += 601_000 }
                #expect(await uploader.upload().sent == 1, "after Retry-After: \(value)")
            }
        }
        for index in 0..<6 { #expect(try await Self.stored("r-\(index)", in: work)["service.received"] == 1) }
        #expect(server.stop() == 0)
    }

    @Test("the clock moved backwards past the time a wait was set: the outbox drains at once, not when the clock catches up")
    func clockMovedBackwards() async throws {
        let (work, token, container, server, front) = try await Self.live()
        let clock = NIOLockedValueBox<Int64>(Int64(Date().timeIntervalSince1970 * 1000))
        let recorder = try Recorder(process: .service, container: container)
        try await front.serve { url in
            let configuration = UploaderConfiguration(server: url, token: token, appID: Self.app)
            let uploader = try Uploader(configuration: configuration, container: container, clock: { clock.withLockedValue { $0 } })
            Self.serviceRun(recorder, "b-1")
            front.script.withLockedValue { $0 = [.unavailable(retryAfter: "1800")] }
            let report = await uploader.upload()
            #expect(report.waiting == 1)
            // Ten minutes back (the user fixed the time by hand, or NTP did): still 40 minutes of wait on that clock.
            clock.withLockedValue { $0 -= 600_000 }
            let drained = await uploader.upload()
            #expect(drained.sent == 1 && drained.waiting == 0, "\(drained)")
        }
        #expect(try await Self.stored("b-1", in: work)["service.delivered"] == 1)
        #expect(server.stop() == 0)
    }

    @Test("overlapping upload() calls, on one uploader and on a second one over the same container: each bundle is sent once")
    func overlappingUploads() async throws {
        let (work, token, container, server, front) = try await Self.live()
        let recorder = try Recorder(process: .service, container: container)
        try await front.serve { url in
            var configuration = UploaderConfiguration(server: url, token: token, appID: Self.app)
            configuration.maxBundleBytes = 2_000  // several bundles
            let first = try Uploader(configuration: configuration, container: container)
            let second = try Uploader(configuration: configuration, container: container)
            for index in 0..<30 { Self.serviceRun(recorder, "o-\(index)") }
            front.script.withLockedValue { $0 = Array(repeating: .delayed(milliseconds: 150), count: 40) }
            let reports = await withTaskGroup(of: UploadReport.self) { group in
                for uploader in [first, first, first, second] { group.addTask { await uploader.upload() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            _ = await first.upload()  // whatever the overlap left for later
            #expect(reports.allSatisfy { $0.lastError == nil }, "\(reports)")
        }
        let seen = front.seen.withLockedValue { $0 }
        #expect(seen.count >= 3 && seen.values.allSatisfy { $0 == 1 }, "\(seen)")
        for index in 0..<30 {
            #expect(
                try await Self.stored("o-\(index)", in: work) == ["service.received": 1, "service.download": 1, "service.delivered": 1])
        }
        #expect(server.stop() == 0)
    }

    @Test(
        "a cancelled upload is no failure: no attempt counted, no backoff, the bundle sent by the next call; a pass two callers share goes on when one of them gives up"
    )
    func cancellation() async throws {
        let (work, token, container, server, front) = try await Self.live()
        let recorder = try Recorder(process: .service, container: container)
        try await front.serve { url in
            let configuration = UploaderConfiguration(server: url, token: token, appID: Self.app)
            let uploader = try Uploader(configuration: configuration, container: container)
            Self.serviceRun(recorder, "x-1")
            front.script.withLockedValue { $0 = [.delayed(milliseconds: 3_000)] }
            let task = Task { await uploader.upload() }
            try await Task.sleep(for: .milliseconds(500))
            task.cancel()
            let cancelled = await task.value
            #expect(cancelled.sent == 0 && cancelled.waiting == 1 && cancelled.lastError == nil, "\(cancelled)")
            let metadata = try #require(
                FileManager.default.contentsOfDirectory(atPath: container.root.appendingPathComponent("outbox").path)
                    .first { $0.hasSuffix(".json") })
            let saved = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(
                        contentsOf: container.root
                            .appendingPathComponent("outbox").appendingPathComponent(metadata))) as? [String: Any])
            #expect((saved["attempts"] as? NSNumber)?.intValue == 0 && saved["held_until"] == nil, "\(saved)")
            try await Task.sleep(for: .milliseconds(3_000))  // the delayed attempt reaches the server after all
            let next = await uploader.upload()  // at once: no backoff to wait out
            #expect(next.sent == 1 && next.waiting == 0, "\(next)")

            // Two callers share a pass: one of them giving up does not stop it for the other.
            Self.serviceRun(recorder, "x-2")
            front.script.withLockedValue { $0 = [.delayed(milliseconds: 1_000)] }
            let leaving = Task { await uploader.upload() }
            try await Task.sleep(for: .milliseconds(200))
            let staying = Task { await uploader.upload() }
            try await Task.sleep(for: .milliseconds(200))
            leaving.cancel()
            let stayed = await staying.value
            #expect(stayed.sent == 1 && stayed.waiting == 0, "\(stayed)")
        }
        #expect(try await Self.stored("x-1", in: work)["service.received"] == 1)
        #expect(try await Self.stored("x-2", in: work)["service.received"] == 1)
        #expect(server.stop() == 0)
    }

    /// Runs the probe's `extension-upload` (a service-extension process) and returns what it printed.
    static func extensionUpload(
        _ work: WorkFolder, server: String, token: String, id: String, within seconds: Double
    ) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process(), output = Pipe()
                        process.executableURL = Executable.url.deletingLastPathComponent().appendingPathComponent("pushtrace-agent-probe")
                        process.arguments = [
                            "extension-upload", work.url.appendingPathComponent("group").path, server, token, Self.app, id,
                            String(seconds),
                        ]
                        process.standardOutput = output
                        try process.run()
                        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        process.waitUntilExit()
                        return text
                    })
            }.start()
        }
    }

    /// The seconds the probe's `extension-upload` says its upload took.
    static func seconds(_ output: String) -> Double {
        let words = output.split(whereSeparator: \.isWhitespace)
        return words.firstIndex(of: "seconds").flatMap {
            words.index(after: $0) < words.endIndex ? Double(words[words.index(after: $0)]) : nil
        } ?? 99
    }

    @Test(
        "the service extension uploads its own notification within its bound, then the app uploads the rest: every record stored once, also when the extension's time ran out mid-request"
    )
    func extensionThenApp() async throws {
        let (work, token, container, server, front) = try await Self.live()
        let app = try Recorder(process: .app, container: container)
        app.config(appGroup: "group.net.rorklab.dailypick", categories: [CategoryConfig(id: "DAILY_PICK")])
        try await front.serve { url in
            // Straight through: the extension's own records reach the server before the app ever runs an upload.
            // (A generous bound: the whole test suite runs beside it on two cores.)
            let quick = try await Self.extensionUpload(work, server: url.absoluteString, token: token, id: "e-1", within: 8)
            #expect(quick.hasPrefix("sent 1 packed 1"), "\(quick)")
            #expect(Self.seconds(quick) < 8.5, "\(quick)")
            #expect(
                try await Self.stored("e-1", in: work) == [
                    "service.received": 1, "service.download": 1, "service.attachment": 1,
                    "service.delivered": 1,
                ])
            // A slow network: the extension gives up after its 1 s, its bundle stays for the app (and may yet arrive).
            front.script.withLockedValue { $0 = [.delayed(milliseconds: 4_000)] }
            let slow = try await Self.extensionUpload(work, server: url.absoluteString, token: token, id: "e-2", within: 1)
            #expect(slow.hasPrefix("sent 0 packed 1"), "\(slow)")
            #expect(Self.seconds(slow) < 2.5, "\(slow)")
            try await Task.sleep(for: .milliseconds(3_500))
            app.app.response("e-2", action: "com.apple.UNNotificationDefaultActionIdentifier")
            let uploader = try Uploader(
                configuration: UploaderConfiguration(server: url, token: token, appID: Self.app),
                container: container, recorder: app)
            let report = await uploader.upload()
            #expect(report.waiting == 0 && report.lastError == nil, "\(report)")
        }
        #expect(
            try await Self.stored("e-1", in: work) == [
                "service.received": 1, "service.download": 1, "service.attachment": 1,
                "service.delivered": 1,
            ])
        #expect(
            try await Self.stored("e-2", in: work) == [
                "service.received": 1, "service.download": 1, "service.attachment": 1,
                "service.delivered": 1, "app.response": 1,
            ])
        #expect(server.stop() == 0)
    }
}
