import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import Logging
import PushTraceCore
import PushTraceRecords
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite
@testable import PushTraceServer

/// What a stranger holding an app's ingest token (or a read token) may try, answered without a crash, a leak or a
/// starved neighbour (docs/security.md; the live-release version is `make attack-test`).
@Suite("Hostile clients")
struct HostileClientTests {
    static let int64Max = "9223372036854775807"
    static let int64Min = "-9223372036854775808"

    @Test("extreme times are 400 or a rejected line, never an overflow (was: the server died)")
    func extremeTimes() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let id = UUID().uuidString
            // uploaded_at in 1973 with a record at Int64.max: the correction overflowed.
            let overflow = Bodies.gzip([
                Lines.manifest(uploadedAt: 100_000_000_000),
                #"{"type":"event","ts":\#(Self.int64Max),"process":"service","event":"service.received","notification_id":"\#(id)"}"#,
            ])
            let refused = try await client.upload(overflow, token: server.ingestToken)
            #expect(refused.status == .badRequest)
            #expect((refused.json["message"] as? String)?.contains("uploaded_at") == true)
            for uploadedAt in [Int64.max, Int64.min] {
                let response = try await client.upload(Bodies.gzip([Lines.manifest(uploadedAt: uploadedAt)]), token: server.ingestToken)
                #expect(response.status == .badRequest, "uploaded_at \(uploadedAt)")
            }
            // A correct clock, one record at Int64.max: that line rejected, the rest stored.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let mixed = Bodies.gzip(
                [
                    Lines.manifest(uploadedAt: now),
                    #"{"type":"event","ts":\#(Self.int64Max),"process":"service","event":"service.received","notification_id":"\#(id)"}"#,
                ]
                    + Lines.serviceSteps(id))
            let stored = try await client.upload(mixed, token: server.ingestToken)
            #expect(stored.status == .ok)
            #expect(stored.json["rejected"] as? Int == 1)
            let reason = ((stored.json["rejections"] as? [[String: Any]])?.first?["reason"] as? String) ?? ""
            #expect(reason.contains("out of range"), "\(reason)")

            for now in [Self.int64Min, Self.int64Max, "1e308", "-0"] {
                let alerts = try await client.get("/v1/alerts?now=\(now)", token: server.readToken)
                #expect(alerts.status == .badRequest, "now=\(now)")
            }
            var replay: HTTPFields = [:]
            replay[HTTPField.Name("Pushtrace-Received-At")!] = Self.int64Min
            let replayed = try await client.upload(Bodies.bundle(), token: server.adminToken, extra: replay)
            #expect(replayed.status == .badRequest)
            #expect(try await client.get("/v1/notifications?since=\(Self.int64Min)", token: server.readToken).status == .badRequest)
            #expect(try await client.get("/healthz", token: nil).status == .ok)
        }
    }

    @Test("a 500 says plain words and a request ID; the log has the error under that ID")
    func internalErrorsLeakNothing() async throws {
        let server = try await TestServer()
        try await server.run { client in
            // What the server cannot foresee: a table gone from under it.
            try await server.folder.sqlite.pool.writeWithoutTransaction {
                try $0.execute(sql: "ALTER TABLE notification RENAME TO notification_hidden")
            }
            let response = try await client.get("/v1/notifications?app=\(TestServer.app)", token: server.adminToken)
            try await server.folder.sqlite.pool.writeWithoutTransaction {
                try $0.execute(sql: "ALTER TABLE notification_hidden RENAME TO notification")
            }
            #expect(response.status == .internalServerError)
            let body = response.text
            for leak in ["SQLite", "SELECT", "notification", "table", server.folder.path] {
                #expect(!body.contains(leak), "the 500 leaks \(leak): \(body)")
            }
            let requestID = try #require(response.json["request_id"] as? String)
            #expect(response.headers[HTTPField.Name("X-Request-ID")!] == requestID)
        }
    }

    @Test("every answer carries X-Request-ID, errors their request_id too")
    func requestIDs() async throws {
        let server = try await TestServer()
        try await server.run { client in
            for (uri, token) in [
                ("/healthz", nil), ("/v1/nothing", nil), ("/v1/alerts", server.readToken),
                ("/v1/alerts", nil),
            ] as [(String, String?)] {
                let response = try await client.get(uri, token: token)
                let id = response.headers[HTTPField.Name("X-Request-ID")!]
                #expect(id?.isEmpty == false, "\(uri): no X-Request-ID")
                if response.status.code >= 400 { #expect(response.json["request_id"] as? String == id) }
            }
        }
    }

    @Test("/metrics: without a token the server's own series only; ingest and read tokens 403; a metrics token sees apps")
    func metricsByToken() async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.upload(Bodies.bundle(), token: server.ingestToken).status == .ok)
            let anonymous = try await client.get("/metrics", token: nil)
            #expect(anonymous.status == .ok)
            #expect(anonymous.text.contains(#"pushtrace_bundles_total{outcome="accepted"} 1"#))
            #expect(!anonymous.text.contains("app="), "\(anonymous.text)")
            let full = try await client.get("/metrics", token: server.metricsToken)
            #expect(full.text.contains(#"pushtrace_service_runs_total{app="net.rorklab.dailypick",category="DAILY_PICK"} 1"#))
            #expect(try await client.get("/metrics", token: server.adminToken).text.contains("app="))
            #expect(try await client.get("/metrics", token: server.ingestToken).status == .forbidden)
            #expect(try await client.get("/metrics", token: server.readToken).status == .forbidden)
            #expect(try await client.get("/metrics", token: "pt_unknown_token").status == .unauthorized)
            // A metrics token reads nothing else.
            #expect(try await client.get("/v1/alerts", token: server.metricsToken).status == .forbidden)
            #expect(try await client.upload(Bodies.bundle(), token: server.metricsToken).status == .forbidden)
        }
    }

    @Test("/v1/alerts counts only the caller's app's windows")
    func alertsEvaluatedPerCaller() async throws {
        let server = try await TestServer()
        try await server.run { client in
            // Enough settled notifications in the other app's window to be judged.
            let now = Lines.t0 + 3_600_000
            var lines = [Lines.manifest(app: TestServer.otherApp, device: nil)]
            for n in 0..<60 { lines += Lines.sent("o-\(n)", at: Lines.t0 + Int64(n) * 1000) }
            var device = [Lines.manifest(app: TestServer.otherApp)]
            for n in 0..<60 { device += Lines.serviceSteps("o-\(n)", at: Lines.t0 + Int64(n) * 1000 + 500) }
            #expect(try await client.upload(Bodies.gzip(lines), token: server.otherAppToken, path: "/v1/events").status == .ok)
            #expect(try await client.upload(Bodies.gzip(device), token: server.otherAppToken).status == .ok)
            var admin = 0
            for _ in 0..<100 where admin == 0 {
                try await Task.sleep(for: .milliseconds(100))
                admin = try await client.get("/v1/alerts?now=\(now)", token: server.adminToken).json["evaluated"] as? Int ?? 0
            }
            #expect(admin >= 1)
            let reader = try await client.get("/v1/alerts?now=\(now)", token: server.readToken).json
            #expect(reader["evaluated"] as? Int == 0, "\(reader)")
        }
    }

    @Test("an unauthenticated upload is answered without reading its body, and the connection closes")
    func unauthenticatedUploadsClose() async throws {
        let server = try await TestServer()
        try await server.run { client in
            // A small body is drained, keeping the connection for the next request.
            #expect(try await client.upload(Bodies.bundle(), token: "pt_bad_token").status == .unauthorized)
            #expect(try await client.get("/healthz", token: nil).status == .ok)
            for framing in ["Content-Length: 40000000", "Transfer-Encoding: chunked"] {
                let raw = try await RawHTTP.exchangeWithEndDetached(
                    port: client.port!,
                    send: "POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pt_x_y\r\n"
                        + "\(framing)\r\n\r\n" + String(repeating: "x", count: 1000), readTimeout: 30)
                #expect(raw.text.hasPrefix("HTTP/1.1 401"), "\(framing): \(raw.text)")
                #expect(raw.text.lowercased().contains("connection: close"), "\(framing): \(raw.text)")
            }
        }
    }

    @Test("one ingest token's uploads past its limit get 429 at once; another app's upload is served meanwhile")
    func uploadsPerToken() async throws {
        let server = try await TestServer { $0.uploadsPerToken = 1 }
        try await server.run { client in
            let port = client.port!
            let body = Bodies.bundle()
            // One upload of the token held open: its headers and half its body.
            let held = Task {
                try await RawHTTP.exchangeWithEndDetached(
                    port: port,
                    send: "POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.ingestToken)\r\n"
                        + "Content-Length: \(body.count + 10)\r\n\r\n" + String(repeating: "\n", count: 10), readTimeout: 30)
            }
            try await Task.sleep(for: .milliseconds(500))
            // On a loaded machine the held upload may reach the server later than that: until it does, an upload of
            // the token is still admitted (and stored); once it holds the token's one place, the next gets 429.
            var second = try await client.upload(Bodies.bundle(), token: server.ingestToken)
            let deadline = ContinuousClock.now + .seconds(8)
            while second.status == .ok, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                second = try await client.upload(Bodies.bundle(), token: server.ingestToken)
            }
            #expect(second.status == .tooManyRequests)
            #expect(second.headers[.retryAfter] != nil)
            #expect((second.json["message"] as? String)?.contains("uploads in progress") == true)
            let other = try await client.upload(Bodies.bundle(app: TestServer.otherApp), token: server.otherAppToken)
            #expect(other.status == .ok)
            held.cancel()
        }
    }

    @Test("the upload budget counts bytes: a bundle past one token's share is 413; the whole budget spent is 429")
    func uploadBudget() async throws {
        let server = try await TestServer {
            $0.uploadBudgetBytes = 8 << 20
            $0.budgetWait = .milliseconds(300)
            // The held upload below must not be cut off as slow while the test waits for it to be charged.
            $0.slowUploadGrace = .seconds(120)
        }
        try await server.run { client in
            // Three lines of 900 KB: charged about 5.4 MB, over the token's 4 MiB share.
            let big = String(repeating: "A", count: 900_000)
            let lines =
                [Lines.manifest()]
                + (0..<3).map {
                    #"{"type":"log","ts":\#(Lines.t0),"process":"service","level":"info","message":"\#(big)","notification_id":"n-\#($0)"}"#
                }
            let refused = try await client.upload(Bodies.gzip(lines), token: server.ingestToken)
            #expect(refused.status == .contentTooLarge, "\(refused.text)")
            #expect((refused.json["message"] as? String)?.contains("split it") == true)
            // An admin upload holding most of the budget open; another admin upload then finds no room in time.
            let holding = Bodies.gzip(
                [Lines.manifest()]
                    + (0..<3).map {
                        #"{"type":"log","ts":\#(Lines.t0),"process":"service","level":"info","message":"\#(big)","notification_id":"h-\#($0)"}"#
                    } + Lines.serviceSteps("h"))
            let port = client.port!
            let heldEnded = HeldUploads()
            func hold() -> Task<String, any Error> {
                Task {
                    defer { heldEnded.note() }
                    return try await RawHTTP.heldUploadDetached(
                        port: port, token: server.adminToken, body: holding, holdBack: 30, readTimeout: 60)
                }
            }
            var held = [hold()]
            // On a machine busy with the other suites the held upload may be read and charged late: until it is, an
            // upload finds room and is stored. And a held upload that asked for room while a squeezed one was being
            // stored may have been refused itself: then another is held. One squeezed upload at a time, a second
            // apart, so that a held upload mostly finds the budget to itself.
            try await Task.sleep(for: .seconds(1))
            var squeezed = try await client.upload(Bodies.gzip(Array(lines.prefix(3))), token: server.adminToken)
            let deadline = ContinuousClock.now + .seconds(90)
            while squeezed.status == .ok, ContinuousClock.now < deadline {
                if heldEnded.count == held.count { held.append(hold()) }
                try await Task.sleep(for: .seconds(1))
                squeezed = try await client.upload(Bodies.gzip(Array(lines.prefix(3))), token: server.adminToken)
            }
            #expect(squeezed.status == .tooManyRequests, "\(squeezed.text)")
            #expect(squeezed.headers[.retryAfter] != nil)
        }
    }

    /// How many of a test's held uploads have ended (answered, refused or timed out).
    private final class HeldUploads: @unchecked Sendable {
        private let lock = NSLock()
        private var ended = 0

        func note() { lock.withLock { ended += 1 } }
        var count: Int { lock.withLock { ended } }
    }

    /// A stall after 100 bytes of a 100,000-byte body: cut off by the rate (over every window after the grace) or,
    /// with no minimum rate, by the body's deadline; 408 either way, well before the idle timeout.
    @Test(
        "a stalled upload is cut off with 408: by its rate after the grace period, or by the body's deadline",
        arguments: [("rate", "too_slow"), ("deadline", "took over 2 s")])
    func slowUploads(limit: String, expected: String) async throws {
        let server = try await TestServer {
            if limit == "rate" {
                $0.slowUploadGrace = .seconds(1)
                $0.minUploadBytesPerSecond = 1000
            } else {
                $0.maxUploadDuration = .seconds(2)
                $0.minUploadBytesPerSecond = 0
            }
        }
        try await server.run { client in
            let start = ContinuousClock.now
            let answer = try await RawHTTP.exchangeWithEndDetached(
                port: client.port!,
                send: "POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.ingestToken)\r\n"
                    + "Content-Length: 100000\r\n\r\n" + String(repeating: "\n", count: 100), readTimeout: 60)
            #expect(answer.text.hasPrefix("HTTP/1.1 408"), "\(answer.text)")
            #expect(answer.text.contains(expected), "\(answer.text)")
            // Cut off by the server, well before the client would give up: a bound on liveness, not a speed claim
            // (on a loaded machine the 2 s deadline has taken 11 s to be noticed).
            #expect(ContinuousClock.now - start < .seconds(45))
            #expect(try await client.upload(Bodies.bundle(), token: server.ingestToken).status == .ok)
        }
    }

    @Test("any refusal with a large body, or one of unknown length, still coming closes the connection")
    func refusalsCloseOnLargeBodies() async throws {
        let server = try await TestServer()
        try await server.run { client in
            for request in [
                "POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 40000000\r\n\r\n",
                "POST /v1/alerts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                "GET /v1/alerts HTTP/1.1\r\nHost: x\r\nContent-Length: 40000000\r\n\r\n",
                "POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.ingestToken)\r\n"
                    + "Content-Encoding: br\r\nContent-Length: 40000000\r\n\r\n",
            ] {
                let answer = try await RawHTTP.exchangeWithEndDetached(port: client.port!, send: request + "xxxx", readTimeout: 30)
                #expect(answer.text.hasPrefix("HTTP/1.1 4"), "\(request.prefix(30)): \(answer.text)")
                #expect(answer.text.lowercased().contains("connection: close"), "\(request.prefix(30)): \(answer.text)")
            }
            // Without a body, the connection is kept.
            #expect(try await client.get("/v1/alerts", token: nil).headers[.connection] != "close")
        }
    }

    @Test("identifiers are validated at ingest: app_id a bundle identifier, the others printable and bounded")
    func identifiers() async throws {
        let server = try await TestServer()
        try await server.run { client in
            for app in ["net.rorklab.dailypick\n2026 forged line \u{1B}[31m", String(repeating: "a", count: 256), "net/rorklab"] {
                let line = JSONValue.object(["type": "manifest", "bundle_id": "b", "app_id": .string(app)]).jsonText(pretty: false)
                let response = try await client.upload(Bodies.gzip([line]), token: server.adminToken)
                #expect(response.status == .badRequest, "\(app.prefix(40))")
            }
            let device = JSONValue.object([
                "type": "manifest", "bundle_id": "b", "app_id": .string(TestServer.app),
                "device_id": "d\u{1B}[2J",
            ]).jsonText(pretty: false)
            #expect(try await client.upload(Bodies.gzip([device]), token: server.ingestToken).status == .badRequest)
            func event(_ id: String, category: String? = nil) -> String {
                var fields: [String: JSONValue] = [
                    "type": "event", "ts": .int(Lines.t0), "process": "service",
                    "event": "service.received", "notification_id": .string(id),
                ]
                if let category { fields["category"] = .string(category) }
                return JSONValue.object(fields).jsonText(pretty: false)
            }
            let lines = [
                Lines.manifest(), event("id\nforged"), event(String(repeating: "x", count: 256)),
                event("n-1", category: "CAT\r\nX"), event("\u{202E}evil"), event("n-2", category: "DAILY_PICK"),
            ]
            let response = try await client.upload(Bodies.gzip(lines), token: server.ingestToken)
            #expect(response.status == .ok)
            #expect(response.json["accepted"] as? Int == 1)
            #expect(response.json["rejected"] as? Int == 4)
        }
    }
}

@Suite("Log escaping")
struct EscapingLogHandlerTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    @Test("messages and every metadata value are written with control characters escaped")
    func escapes() {
        let capture = LogCapture()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(capture.handler()) }
        logger[metadataKey: "hb.request.id"] = "id\n1"
        logger.info(
            "bundle\nstored \u{1B}[31m",
            metadata: [
                "app": "net.x\n2026 forged", "list": .array(["a\r", "b"]), "nested": .dictionary(["k": "\u{7}"]),
            ])
        let (message, metadata) = (capture.lines[0].message, capture.lines[0].metadata)
        #expect(message == "bundle\\nstored \\e[31m")
        #expect(metadata["app"] == "net.x\\n2026 forged")
        #expect(metadata["list"] == .array(["a\\r", "b"]))
        #expect(metadata["nested"] == .dictionary(["k": "\\u{7}"]))
        #expect(metadata["hb.request.id"] == "id\\n1")
        #expect(capture.lines[0].error == nil)
        logger.error("failed", error: Failure(description: "disk\nfull \u{1B}[2J"))
        #expect(capture.lines[1].error == "disk\\nfull \\e[2J")
    }
}
