import Foundation
import HTTPTypes
import HummingbirdTesting
import PushTraceServer
import PushTraceTestSupport
import Testing

/// The read side: `why` and search over HTTP, tenancy of read tokens, metrics and liveness.
@Suite struct ReadEndpointTests {
    @Test(arguments: TestEngine.all)
    func answersWhyAsJSONAndTextWithinTheTokensApp(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let id = "6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10"
        try await server.run { client in
            #expect(try await client.upload(Bodies.events(notification: id), token: server.ingestToken, path: "/v1/events").status == .ok)
            let lines = [Lines.manifest(app: TestServer.app)] + Lines.serviceSteps(id, expired: true)
            #expect(try await client.upload(Bodies.gzip(lines), token: server.ingestToken).status == .ok)

            let json = try await client.get("/v1/notifications/\(id)", token: server.readToken)
            #expect(json.status == .ok)
            #expect(json.json["cause"] as? String == "service_timeout")
            #expect(json.json["notification_id"] as? String == id.lowercased())
            #expect((json.json["timeline"] as? [Any])?.count == 4)

            let text = try await client.get("/v1/notifications/\(id)", token: server.adminToken, accept: "text/plain")
            #expect(text.status == .ok)
            #expect(text.text.contains("service_timeout"))

            let unknown = try await client.get("/v1/notifications/nope", token: server.readToken)
            try expectError(unknown, .notFound, "unknown_notification")
            #expect(unknown.json["cause"] as? String == "unknown_notification")

            try expectError(
                try await client.get("/v1/notifications/\(id)?app=\(TestServer.otherApp)", token: server.readToken),
                .forbidden, "forbidden")
            try expectError(try await client.get("/v1/notifications/\(id)", token: server.ingestToken), .forbidden, "forbidden")
            try expectError(try await client.get("/v1/notifications/\(id)", token: nil), .unauthorized, "unauthorized")
        }
    }

    @Test(arguments: TestEngine.all)
    func searchesTheTokensAppOnly(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        try await server.run { client in
            for app in [TestServer.app, TestServer.otherApp] {
                let token = app == TestServer.app ? server.ingestToken : server.otherAppToken
                let lines = [Lines.manifest(app: app)] + Lines.serviceSteps("n-\(app)")
                #expect(try await client.upload(Bodies.gzip(lines), token: token).status == .ok)
            }
            let mine = try await client.get("/v1/notifications?limit=10", token: server.readToken)
            let rows = try JSONSerialization.jsonObject(with: Data(buffer: mine.body)) as? [[String: Any]]
            #expect(rows?.map { $0["app_id"] as? String } == [TestServer.app])
            let all = try await client.get("/v1/notifications", token: server.adminToken)
            #expect((try JSONSerialization.jsonObject(with: Data(buffer: all.body)) as? [Any])?.count == 2)
            try expectError(
                try await client.get("/v1/notifications?cause=gremlins", token: server.adminToken),
                .badRequest, "bad_request")
            // A misspelt app: 404 naming the apps for an admin; a known app with nothing matching is an empty list.
            let misspelt = try await client.get("/v1/notifications?app=net.rorklab.dailypik", token: server.adminToken)
            try expectError(misspelt, .notFound, "unknown_app")
            #expect(misspelt.text.contains("apps: \(TestServer.otherApp), \(TestServer.app)"))  // in order of their IDs
            let none = try await client.get("/v1/notifications?app=\(TestServer.app)&cause=ok", token: server.adminToken)
            #expect(none.status == .ok && none.text == "[]")
            try expectError(
                try await client.get("/v1/notifications?since=yesterday", token: server.adminToken),
                .badRequest, "bad_request")
        }
    }

    @Test(arguments: TestEngine.all)
    func exportsIngestAndProductMetrics(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        try await server.run { client in
            let lines = [Lines.manifest(app: TestServer.app)] + Lines.serviceSteps("n-1", expired: true) + Lines.serviceSteps("n-2")
            #expect(try await client.upload(Bodies.gzip(lines), token: server.ingestToken).status == .ok)
            _ = try await client.upload(Bodies.bundle(), token: nil)
            let metrics = try await client.get("/metrics", token: server.metricsToken).text
            for expected in [
                #"pushtrace_bundles_total{outcome="accepted"} 1"#,
                #"pushtrace_records_total{outcome="accepted"} 6"#,
                #"pushtrace_service_runs_total{app="net.rorklab.dailypick",category="DAILY_PICK"} 2"#,
                #"pushtrace_service_timeouts_total{app="net.rorklab.dailypick",category="DAILY_PICK"} 1"#,
                #"pushtrace_service_duration_seconds_count{app="net.rorklab.dailypick",category="DAILY_PICK"} 2"#,
                // Made with the category's other series, so that a first crash is an increase from 0.
                #"pushtrace_service_crashes_total{app="net.rorklab.dailypick",category="DAILY_PICK"} 0"#,
                #"pushtrace_http_responses_total{route="/v1/bundles",status="401"} 1"#,
                "pushtrace_commit_duration_seconds_bucket",
                "pushtrace_ingest_duration_seconds_bucket",
                "pushtrace_received_bytes_total",
            ] {
                #expect(metrics.contains(expected), "missing \(expected)")
            }
            #expect(try await client.get("/healthz", token: nil).status == .ok)
        }
    }

    @Test("HEAD on every GET endpoint answers what GET would, status and headers, without the body")
    func headOnEveryGetEndpoint() async throws {
        let server = try await TestServer()
        let id = UUID().uuidString
        try await server.run { client in
            #expect(try await client.upload(Bodies.events(notification: id), token: server.ingestToken, path: "/v1/events").status == .ok)
            let endpoints: [(String, String?)] = [
                ("/healthz", nil), ("/metrics", nil), ("/v1/notifications/\(id)", server.readToken),
                ("/v1/notifications?app=\(TestServer.app)", server.readToken),
                ("/v1/reports/weekly?app=\(TestServer.app)&week=2026-W46", server.readToken),
                ("/v1/alerts?app=\(TestServer.app)", server.readToken),
            ]
            for (path, token) in endpoints {
                let get = try await client.get(path, token: token)
                let head = try await client.head(path, token: token)
                #expect(get.status == .ok, "GET \(path)")
                #expect(head.status == get.status, "HEAD \(path)")
                #expect(head.body.readableBytes == 0, "HEAD \(path)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "HEAD \(path)")
            }
            // Errors too: their status and headers, no body.
            let unknown = try await client.head("/v1/notifications/nope", token: server.readToken)
            #expect(unknown.status == .notFound && unknown.body.readableBytes == 0)
            #expect(try await client.head("/v1/notifications/\(id)", token: nil).status == .unauthorized)
        }
    }

    @Test("an empty app= is 400 on every read; an ID with a space or non-ASCII text is found through its percent-encoding")
    func emptyAppAndEncodedIDs() async throws {
        let server = try await TestServer()
        let id = "promo 42 été"
        try await server.run { client in
            for path in ["/v1/notifications?app=", "/v1/notifications/x?app=", "/v1/reports/weekly?app=&week=2026-W46"] {
                try expectError(try await client.get(path, token: server.adminToken), .badRequest, "bad_request")
            }
            #expect(try await client.upload(Bodies.events(notification: id), token: server.ingestToken, path: "/v1/events").status == .ok)
            let encoded = try #require(id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed))
            let why = try await client.get("/v1/notifications/\(encoded)", token: server.readToken)
            #expect(why.status == .ok)
            #expect(why.json["notification_id"] as? String == id.lowercased())
            // Decoded, an ID no bundle could hold is a bad request, said as such.
            for bad in ["a%0Ab", "a%1B%5B31m", String(repeating: "x", count: 256)] {
                let answer = try await client.get("/v1/notifications/\(bad)", token: server.readToken)
                try expectError(answer, .badRequest, "bad_request")
                #expect((answer.json["message"] as? String)?.hasPrefix("the notification ID ") == true)
            }
        }
    }

    @Test("a path no endpoint has is 404; a known path under another method is 405 with Allow")
    func answersUnknownPathsAndMethods() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let nothing = try await client.get("/v2/nothing", token: nil)
            try expectError(nothing, .notFound, "not_found")
            #expect(nothing.json["message"] as? String == "no such endpoint: GET /v2/nothing")
            // A known path under another method says which methods it takes.
            let download = try await client.get("/v1/bundles", token: nil)
            try expectError(download, .methodNotAllowed, "method_not_allowed")
            #expect(download.headers[.allow] == "POST")
            #expect(download.json["message"] as? String == "GET /v1/bundles: this endpoint takes POST")
            let delete = try await client.execute(uri: "/v1/notifications/some-id", method: .delete)
            try expectError(delete, .methodNotAllowed, "method_not_allowed")
            #expect(delete.headers[.allow] == "GET, HEAD")
        }
    }

    @Test("malformed HTTP is 400: NIO's bare answer before a request exists, JSON once it does")
    func answersMalformedHTTPWith400() async throws {
        let server = try await TestServer()
        let before = try server.counts()
        try await server.run { client in
            let port = client.port!
            // Not HTTP, a header far over NIO's limit, a control byte in the path: refused by NIO's parser, closed.
            let bigHeader = "X-Big: " + String(repeating: "a", count: 200_000)
            for garbage in [
                "HELLO\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: x\r\n\(bigHeader)\r\n\r\n",
                "GET /he\u{01}althz HTTP/1.1\r\nHost: x\r\n\r\n",
            ] {
                let answer = try await RawHTTP.exchangeDetached(port: port, send: garbage, readTimeout: 30)
                #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"), "\(answer)")
            }
            // A malformed chunk in an upload's body: the request exists, so the answer is the JSON error.
            let chunked =
                "POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.ingestToken)\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n"
            let answer = try await RawHTTP.exchangeToEndDetached(port: port, send: chunked, readTimeout: 30)
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request"), "\(answer)")
            #expect(
                answer.contains(#"{"error":"bad_request","message":"the request was malformed or ended before its body did","request_id":"#)
            )
        }
        #expect(try server.counts() == before)
    }

    @Test func answersExpectContinueAtOnce() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let port = client.port!
            // Headers only, as curl sends them before a large body: the server must answer 100 without the body.
            // Without that answer nothing would come until the body did, so a wait of 10 s (generous on a loaded
            // machine) still tells the two apart.
            let head = "POST /v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n"
            let answer = try await RawHTTP.exchangeDetached(port: port, send: head, readTimeout: 30)
            #expect(answer.hasPrefix("HTTP/1.1 100 Continue"), "\(answer)")
            // Declared over the cap: no 100, a 413 at once.
            let tooLarge =
                "POST /v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(server.ingestToken)\r\n"
                + "Content-Length: \(1 << 30)\r\nExpect: 100-continue\r\n\r\n"
            let refused = try await RawHTTP.exchangeDetached(port: port, send: tooLarge, readTimeout: 30)
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused)")
        }
    }

    @Test func disconnectsAClientThatStallsMidBody() async throws {
        let server = try await TestServer { $0.idleTimeout = .seconds(1) }
        let before = try server.counts()
        try await server.run { client in
            // Headers and the first bytes of a 1,000-byte body, then nothing: a slow or stuck client.
            let stalled =
                "POST /v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(server.ingestToken)\r\n"
                + "Content-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n{\"type\":\"manif"
            let start = ContinuousClock.now
            let answer = try await RawHTTP.exchangeWithEndDetached(port: client.port!, send: stalled, readTimeout: 20)
            #expect(answer.closed, "the server kept the stalled connection open: \(answer.text)")
            #expect(ContinuousClock.now - start < .seconds(15))
            // The client's fault, counted (and logged) as such, not as the server's.
            // (On a new connection: the test client's own has been idle past the one-second timeout too.)
            // The request ends a moment after its connection does: its body's reader and rate watchdog wind down.
            var metrics = ""
            for _ in 0..<50 where !metrics.contains("pushtrace_http_responses_total{route=\"/v1/bundles\"") {
                try await Task.sleep(for: .milliseconds(100))
                metrics = try await RawHTTP.exchangeDetached(
                    port: client.port!, send: "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", readTimeout: 30)
            }
            #expect(metrics.contains(#"pushtrace_http_responses_total{route="/v1/bundles",status="400"} 1"#), "\(metrics)")
            #expect(!metrics.contains(#"status="500""#))
        }
        #expect(try server.counts() == before)
    }
}
