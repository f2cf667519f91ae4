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

/// The agent against a live `pushtrace serve`: the app in this test process, the service and content extensions in
/// separate executables (`pushtrace-agent-probe`), the backend through `pushtrace send-event`.
@Suite("Agent end to end: record, upload, why")
struct AgentEndToEndTests {
    static let app = "net.rorklab.dailypick"

    /// A work folder with a store, an ingest token for the app, and an App Group container.
    static func setUp() throws -> (WorkFolder, token: String, container: AgentContainer) {
        let work = try WorkFolder()
        let created = try work.run("token", "create", "--app", app, "--scope", "ingest", "--label", "agent test")
        #expect(created.status == 0, "\(created.stderr)")
        let token = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (work, token, try AgentContainer(directory: work.url.appendingPathComponent("group")))
    }

    static func probe(_ work: WorkFolder, _ arguments: String...) async throws {
        let ending = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = Executable.url.deletingLastPathComponent().appendingPathComponent("pushtrace-agent-probe")
                        process.arguments = [arguments[0], work.url.appendingPathComponent("group").path] + arguments.dropFirst()
                        try process.run()
                        process.waitUntilExit()
                        return process.terminationStatus
                    })
            }.start()
        }
        #expect(ending == 0, "pushtrace-agent-probe \(arguments.joined(separator: " "))")
    }

    /// The backend's two records for one push, through `pushtrace send-event` to the server.
    static func backendSent(_ id: String, server: String, token: String, work: WorkFolder) async throws {
        for arguments in [
            [
                "push.sent", "--category", "DAILY_PICK", "--mutable-content", "--has-alert", "--payload-bytes", "412",
                "--attachment-url", "https://cdn.rorklab.net/p/8812.jpg",
            ],
            ["push.apns_response", "--status", "200", "--apns-unique-id", "0a8b2c4d-1111-2222-3333-444455556666"],
        ] {
            let output = try await work.runDetached(
                ["send-event"] + arguments + ["--app", app, "--id", id, "--server", server],
                environment: ["PUSHTRACE_TOKEN": token])
            #expect(output.status == 0, "\(output.stderr)")
        }
    }

    @Test(
        "a realistic notification in all three processes: uploaded to a live server, `why` shows the whole timeline, ok; a timed-out one is service_timeout"
    )
    func endToEnd() async throws {
        let (work, token, container) = try Self.setUp()
        let server = try await ServerProcess(arguments: ["--db", "pushtrace.sqlite"], in: work.url)
        let ok = "5E0C1A2B-3C4D-4E5F-8A9B-0C1D2E3F4A5B", slow = "7A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D"
        for id in [ok, slow] { try await Self.backendSent(id, server: server.url, token: token, work: work) }

        let appRecorder = try Recorder(process: .app, container: container)
        appRecorder.config(
            appGroup: "group.net.rorklab.dailypick",
            categories: [.init(id: "DAILY_PICK", actions: ["SAVE_PICK", "SHUFFLE_PICK"])])
        try await Self.probe(work, "service", ok, "ok")
        try await Self.probe(work, "content", ok, "DAILY_PICK")
        try await Self.probe(work, "service", slow, "timeout")
        appRecorder.app.willPresent(ok, options: ["banner", "sound"])

        let uploader = try Uploader(
            configuration: UploaderConfiguration(
                server: URL(string: server.url)!, token: token,
                appID: Self.app, appVersion: "2.3.1", build: "45",
                os: "iOS 18.1", deviceModel: "iPhone15,2"),
            container: container, recorder: appRecorder)
        let report = await uploader.upload()
        #expect(report.sent == 1 && report.waiting == 0 && report.setAside == 0, "\(report)")

        let why = try await work.runDetached(["why", ok, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(why.stdout.utf8)) as? [String: Any], "\(why.stderr)")
        #expect(json["cause"] as? String == "ok")
        let timeline = try #require(json["timeline"] as? [[String: Any]])
        let steps = timeline.map { "\($0["process"] as? String ?? "?") \($0["event"] as? String ?? "?")" }
        for step in [
            "server push.sent", "server push.apns_response", "service service.received", "service service.download",
            "service service.attachment", "service service.delivered", "app app.will_present",
            "content content.received", "content content.image", "content shared.write", "content content.action",
        ] {
            #expect(steps.contains(step), "\(step) missing from \(steps)")
        }
        let text = try await work.runDetached(["why", ok])
        #expect(text.stdout.contains("ok"))

        let timedOut = try await work.runDetached(["why", slow, "--format", "json"])
        let slowJSON = try #require(try JSONSerialization.jsonObject(with: Data(timedOut.stdout.utf8)) as? [String: Any])
        #expect(slowJSON["cause"] as? String == "service_timeout")
        #expect(server.stop() == 0)
    }

    @Test("send-event into a local store, and lint against the configuration the app's processes recorded")
    func sendEventAndLint() async throws {
        let (work, _, container) = try Self.setUp()
        let id = "9C8B7A6D-5E4F-4A3B-8C2D-1E0F9A8B7C6D"
        var output = try work.run(
            "send-event", "push.sent", "--app", Self.app, "--id", id, "--category", "DAILY_PICK",
            "--has-alert", "--payload-bytes", "300")
        #expect(output.status == 0, "\(output.stderr)")
        output = try work.run(
            "send-event", "push.apns_response", "--app", Self.app, "--id", id, "--status", "400",
            "--reason", "BadDeviceToken")
        #expect(output.status == 0, "\(output.stderr)")
        output = try work.run("why", id, "--format", "json")
        #expect(output.stdout.contains(#""cause" : "apns_rejected""#), "\(output.stdout)")
        output = try work.run("send-event", "push.sent", "--app", Self.app, "--id", id)
        #expect(output.status == 2 && output.stderr.contains("--category"))
        output = try work.run(
            "send-event", "push.sent", "--app", Self.app, "--id", id, "--category", "DAILY_PICK", "--payload-bytes", "300",
            "--collapse-id", "")
        #expect(output.status == 2 && output.stderr.contains("--collapse-id is empty"), "\(output.stderr)")

        // The app's processes record their configuration; an ingested bundle of it is what lint reads.
        let app = try Recorder(process: .app, container: container)
        app.config(appGroup: "group.net.rorklab.dailypick", categories: [.init(id: "DAILY_PICK"), .init(id: "STREAK_REMINDER")])
        try await Self.probe(work, "content", "n-config", "DAILY_PICK")
        try await Self.probe(work, "service", "n-config", "ok")
        let uploader = try Uploader(
            configuration: UploaderConfiguration(
                server: URL(string: "http://127.0.0.1:9")!, token: "-",
                appID: Self.app), container: container)
        _ = await uploader.upload()  // packs the bundle into the outbox (the server is unreachable)
        let outbox = container.root.appendingPathComponent("outbox")
        let body = try #require(try FileManager.default.contentsOfDirectory(atPath: outbox.path).first { $0.hasSuffix(".gz") })
        let manifest = Deflater.gzip(
            Array(#"{"type":"manifest","bundle_id":"b-config","app_id":"\#(Self.app)","device_id":"d-1"}"#.utf8) + [10])
        try work.write("config.ndjson.gz", bytes: manifest + Array(try Data(contentsOf: outbox.appendingPathComponent(body))))
        #expect(try work.run("ingest", "config.ndjson.gz").status == 0)

        try work.write("payload.json", [#"{"aps":{"alert":{"title":"Pick"},"category":"STREAK_REMINDER"}}"#])
        output = try work.run("lint", "payload.json", "--app", Self.app)
        #expect(output.status == 1)
        #expect(output.stdout.contains("[mutable_content_missing]"), "\(output.stdout)")
        #expect(output.stdout.contains("[category_not_handled]"))
        #expect(output.stdout.contains("fix: "))
        try work.write("good.json", [#"{"aps":{"alert":{"title":"Pick"},"category":"DAILY_PICK","mutable-content":1}}"#])
        output = try work.run("lint", "good.json", "--app", Self.app, "--format", "json")
        #expect(
            output.status == 0 && output.stdout.contains(#""findings""#) && !output.stdout.contains("severity"),
            "\(output.stdout)")
    }

    /// What the fault front does with one upload attempt.
    enum Fault: Sendable {
        /// Passes the bundle to the server, then loses the answer (the connection broke after the commit).
        case forwardAndLoseAnswer
        /// Passes the bundle to the server and returns its answer.
        case forward
        /// 503 with `Retry-After`.
        case unavailable(seconds: Int)
        /// 400: the bundle is malformed.
        case badRequest
    }

    @Test(
        "upload faults: an answer lost after the commit (resent after a relaunch), 503 with Retry-After, a 400, the server killed: no record lost, none stored twice, the 400 bundle set aside"
    )
    func uploadFaults() async throws {
        let (work, token, container) = try Self.setUp()
        let server = NIOLockedValueBox(try await ServerProcess(arguments: ["--db", "pushtrace.sqlite"], in: work.url))
        let backend = NIOLockedValueBox(server.withLockedValue { $0.url })
        let script = NIOLockedValueBox<[Fault]>([])
        let attempts = NIOLockedValueBox(0)
        // A front between the uploader and the real server, which plays each attempt's fault.
        let router = Router()
        router.post("/v1/bundles") { request, _ -> Response in
            attempts.withLockedValue { $0 += 1 }
            let fault = script.withLockedValue { $0.isEmpty ? Fault.forward : $0.removeFirst() }
            let body = try await request.body.collect(upTo: 16 << 20)
            switch fault {
            case .unavailable(let seconds):
                return Response(
                    status: .serviceUnavailable, headers: [.retryAfter: String(seconds)],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"error":"busy","message":"try later"}"#)))
            case .badRequest:
                return Response(
                    status: .badRequest,
                    body: .init(byteBuffer: ByteBuffer(string: #"{"error":"bad_bundle","message":"malformed"}"#)))
            case .forward, .forwardAndLoseAnswer:
                var forwarded = URLRequest(url: URL(string: backend.withLockedValue { $0 } + "/v1/bundles")!)
                forwarded.httpMethod = "POST"
                forwarded.setValue(request.headers[.authorization], forHTTPHeaderField: "Authorization")
                forwarded.setValue(request.headers[.contentType], forHTTPHeaderField: "Content-Type")
                forwarded.setValue(request.headers[.contentEncoding], forHTTPHeaderField: "Content-Encoding")
                forwarded.httpBody = Data(buffer: body)
                guard let (data, response) = try? await URLSession.shared.data(for: forwarded),
                    let status = (response as? HTTPURLResponse)?.statusCode
                else {
                    return Response(status: .badGateway)  // the server is down
                }
                if case .forwardAndLoseAnswer = fault { return Response(status: .badGateway) }
                return Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(data: data)))
            }
        }
        let front = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let clock = NIOLockedValueBox<Int64>(Int64(Date().timeIntervalSince1970 * 1000))
        let service = try Recorder(process: .service, container: container)
        let batches = NIOLockedValueBox<[String: [String]]>([:])  // batch → its notification IDs
        @Sendable func record(_ batch: String) {
            let ids = (0..<20).map { "\(batch)-\($0)" }
            batches.withLockedValue { $0[batch] = ids }
            for id in ids {
                service.service.received(id, category: "DAILY_PICK")
                service.service.delivered(id, elapsedMs: 250)
            }
        }
        try await front.test(.live) { client in
            let configuration = UploaderConfiguration(
                server: URL(string: "http://127.0.0.1:\(client.port!)")!, token: token,
                appID: Self.app)
            var uploader = try Uploader(configuration: configuration, container: container, clock: { clock.withLockedValue { $0 } })
            func advance(_ seconds: Int64) { clock.withLockedValue { $0 += seconds * 1000 } }

            // The server commits, the answer is lost: the bundle waits, and its resend is a duplicate.
            record("lost")
            script.withLockedValue { $0 = [.forwardAndLoseAnswer] }
            var report = await uploader.upload()
            #expect(report.sent == 0 && report.waiting == 1)
            // The app is killed and launched again: a new uploader finds the same bundle, with the same bundle_id.
            uploader = try Uploader(configuration: configuration, container: container, clock: { clock.withLockedValue { $0 } })
            advance(3_600)
            report = await uploader.upload()
            #expect(report.sent == 1 && report.duplicates == 1 && report.waiting == 0, "\(report)")

            // 503 with Retry-After: 30: not tried again before 30 s have passed.
            record("busy")
            script.withLockedValue { $0 = [.unavailable(seconds: 30)] }
            let before = clock.withLockedValue { $0 }
            report = await uploader.upload()
            #expect(report.waiting == 1 && (report.nextAttemptAt ?? 0) >= before + 30_000)
            let triedSoFar = attempts.withLockedValue { $0 }
            advance(10)
            #expect(await uploader.upload().sent == 0)
            #expect(attempts.withLockedValue { $0 } == triedSoFar)
            advance(3_600)
            #expect(await uploader.upload().sent == 1)

            // 400: set aside in rejected/, never retried.
            record("refused")
            script.withLockedValue { $0 = [.badRequest] }
            report = await uploader.upload()
            #expect(report.setAside == 1 && report.waiting == 0)
            let afterRefusal = attempts.withLockedValue { $0 }
            advance(3_600)
            #expect(await uploader.upload().sent == 0)
            #expect(attempts.withLockedValue { $0 } == afterRefusal)

            // The server killed: the bundle waits until a new server runs on the same store.
            record("killed")
            try await server.withLockedValue { $0 }.kill()
            report = await uploader.upload()
            #expect(report.sent == 0 && report.waiting == 1)
            let restarted = try await ServerProcess(arguments: ["--db", "pushtrace.sqlite"], in: work.url)
            server.withLockedValue { $0 = restarted }
            backend.withLockedValue { $0 = restarted.url }
            advance(3_600)
            report = await uploader.upload()
            #expect(report.sent == 1 && report.waiting == 0, "\(report)")
        }
        #expect(server.withLockedValue { $0 }.stop() == 0)
        let recorded = batches.withLockedValue { $0 }

        // Every recorded step is stored exactly once, except the refused bundle's, which are kept aside whole.
        let exported = try await work.runDetached(["export"])
        #expect(exported.status == 0, "\(exported.stderr)")
        var stored: [String: Int] = [:]
        for line in exported.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["event"] as? String == "service.received", let id = object["notification_id"] as? String {
                stored[id, default: 0] += 1
            }
        }
        for batch in ["lost", "busy", "killed"] {
            for id in recorded[batch]! { #expect(stored[id] == 1, "\(id) stored \(stored[id] ?? 0) times") }
        }
        #expect(recorded["refused"]!.allSatisfy { stored[$0] == nil })
        let rejected = container.root.appendingPathComponent("rejected")
        let kept = try FileManager.default.contentsOfDirectory(atPath: rejected.path).filter { $0.hasSuffix(".gz") }
        #expect(kept.count == 1)
        var body = Data()
        let inflater = try Inflater(format: .gzip)
        try Data(contentsOf: rejected.appendingPathComponent(kept[0])).withUnsafeBytes {
            try inflater.consume($0) { body.append(contentsOf: $0) }
        }
        try inflater.finish()
        let keptText = String(decoding: body, as: UTF8.self)
        #expect(recorded["refused"]!.allSatisfy { keptText.contains("\"\($0)\"") })
    }
}
