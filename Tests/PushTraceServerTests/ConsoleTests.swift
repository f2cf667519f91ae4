import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceServer

/// The console under /ui/ on a live server: sign-in, the session cookie, the pages a read token may see, bad input
/// answered as pages, the security headers, and live follow over Server-Sent Events.
@Suite struct ConsoleTests {
    /// Signs in with `token`; returns the response (303 with a cookie on success).
    static func login(_ client: some TestClientProtocol, token: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
        return try await client.execute(uri: "/ui/login", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// The session cookie's `name=value` from a sign-in's `Set-Cookie`.
    static func cookie(_ response: TestResponse) throws -> String {
        let header = try #require(response.headers[.setCookie])
        return String(try #require(header.split(separator: ";").first))
    }

    static func page(_ client: some TestClientProtocol, _ uri: String, cookie: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.accept: "text/html"]
        if let cookie { headers[.cookie] = cookie }
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    static func expectSecured(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        let policy = response.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
        #expect(policy.contains("frame-ancestors 'none'"), sourceLocation: sourceLocation)
        #expect(policy.contains("script-src 'self'"), sourceLocation: sourceLocation)
        #expect(!policy.contains("unsafe-inline"), sourceLocation: sourceLocation)
        #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", sourceLocation: sourceLocation)
    }

    @Test func signsInWithAReadTokenIntoASessionCookieAndRefusesOthers() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let ingest = try await Self.login(client, token: server.ingestToken)
            #expect(ingest.status == .forbidden)
            #expect(ingest.text.contains("cannot sign in"))
            #expect(ingest.headers[.setCookie] == nil)
            Self.expectSecured(ingest)

            let huge = try await Self.login(client, token: String(repeating: "x", count: 10_000))
            #expect(huge.status == .contentTooLarge)
            #expect(huge.headers[.contentType] == "text/html; charset=utf-8")

            // A sign-in another site forges is refused, whatever the token.
            for headers: HTTPFields in [
                [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"], [HTTPField.Name("Sec-Fetch-Site")!: "same-site"],
                [HTTPField.Name("Origin")!: "https://evil.example"],
            ] {
                #expect(try await Self.login(client, token: server.readToken, headers: headers).status == .forbidden)
            }
            let ownForm = try await Self.login(
                client, token: "pt_000000000000_nope",
                headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin", HTTPField.Name("Origin")!: "http://localhost:1"])
            #expect(ownForm.status == .unauthorized, "the console's own form, the proxy's port aside")

            let wrong = try await Self.login(client, token: "pt_000000000000_nope")
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("not one this server knows"))

            let signedIn = try await Self.login(client, token: server.readToken)
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/ui/")
            let setCookie = try #require(signedIn.headers[.setCookie])
            for attribute in ["HttpOnly", "SameSite=Strict", "Max-Age=43200", "Path=/"] {
                #expect(setCookie.contains(attribute), "\(setCookie)")
            }
            #expect(!setCookie.contains("Secure"), "plain HTTP from no trusted proxy")
            // The cookie names the token's public ID, never its secret.
            let secret = try #require(server.readToken.split(separator: "_").last)
            #expect(!setCookie.contains(secret))

            let cookie = try Self.cookie(signedIn)
            let overview = try await Self.page(client, "/ui/", cookie: cookie)
            #expect(overview.status == .ok)
            #expect(overview.text.contains("read token"))
            Self.expectSecured(overview)
            // Without a session a page sends the browser to the sign-in.
            let anonymous = try await Self.page(client, "/ui/search", cookie: nil)
            #expect(anonymous.status == .seeOther)
            #expect(anonymous.headers[.location] == "/ui/login")

            let logout = try await client.execute(uri: "/ui/logout", method: .post, headers: [.cookie: cookie])
            #expect(logout.status == .seeOther)
            #expect(logout.headers[.setCookie]?.contains("Max-Age=0") == true)
        }
    }

    @Test func theCookieIsSecureWhenATrustedProxySaysTheRequestCameOverTLS() async throws {
        let server = try await TestServer { $0.trustedProxies = try! TrustedProxies(parsing: ["127.0.0.1/32", "::1/128"]) }
        try await server.run { client in
            let signedIn = try await Self.login(
                client, token: server.readToken, headers: [HTTPField.Name("X-Forwarded-Proto")!: "https"])
            let setCookie = signedIn.headers[.setCookie] ?? ""
            #expect(setCookie.hasPrefix("__Host-pushtrace_session=") && setCookie.hasSuffix("; Secure"), "\(setCookie)")
            // The session works under that name.
            let page = try await Self.page(client, "/ui/alerts", cookie: String(setCookie.split(separator: ";")[0]))
            #expect(page.status == .ok)
        }
    }

    @Test func anExpiredOrForgedSessionSignsInAgain() async throws {
        let server = try await TestServer()
        let id = try #require(TokenText(server.readToken)?.id)
        let stored = try await #require(try server.folder.store.storedToken(id: id))
        let expired = SessionText(token: stored, expires: Int64(Date().timeIntervalSince1970) - 1)
        var forged = SessionText(token: stored, expires: Int64(Date().timeIntervalSince1970) + 3600)
        forged.mac = String(forged.mac.reversed())
        let tampered = forged
        try await server.run { client in
            for session in [expired, tampered] {
                let page = try await Self.page(client, "/ui/", cookie: "pushtrace_session=\(session.text)")
                #expect(page.status == .seeOther)
                #expect(page.headers[.location] == "/ui/login")
            }
            let garbage = try await Self.page(client, "/ui/alerts", cookie: "pushtrace_session=<script>")
            #expect(garbage.status == .seeOther)
        }
    }

    @Test func repeatedFailedSignInsAreSlowedDown() async throws {
        // A wait far longer than a loaded machine may take between two requests, so the fourth surely falls in it.
        let server = try await TestServer {
            $0.freeLoginFailures = 2
            $0.firstLoginWait = .seconds(120)
        }
        try await server.run { client in
            for _ in 0..<2 { #expect(try await Self.login(client, token: "pt_000000000000_nope").status == .unauthorized) }
            let third = try await Self.login(client, token: "pt_000000000000_nope")
            #expect(third.headers[.retryAfter] == "120")
            let fourth = try await Self.login(client, token: server.readToken)
            #expect(fourth.status == .tooManyRequests, "even a right token waits its turn")
            #expect(fourth.text.contains("Too many failed sign-ins"))
        }
    }

    @Test func pagesShowStoredTextEscapedAndVisible() async throws {
        let server = try await TestServer()
        let id = "hostile-1"
        // What a device may store: a log line's message and a field pushtrace does not know are kept as sent.
        let hostile = "<script>alert(1)</script>\u{1B}[2J\u{202E}kcatta"
        try await server.run { client in
            let sent = Lines.sent(id).map {
                $0.replacingOccurrences(of: "\"has_alert\":true", with: "\"has_alert\":true,\"campaign\":\(Self.jsonString(hostile))")
            }
            #expect(
                try await client.upload(
                    Bodies.gzip([Lines.manifest(app: TestServer.app, device: nil)] + sent), token: server.ingestToken,
                    path: "/v1/events"
                ).status == .ok)
            let log =
                #"{"type":"log","ts":\#(Lines.t0 + 900),"process":"service","level":"error","message":\#(Self.jsonString(hostile)),"notification_id":"\#(id)"}"#
            let ack = try await client.upload(
                Bodies.gzip([Lines.manifest(app: TestServer.app)] + Lines.serviceSteps(id) + [log]), token: server.ingestToken)
            #expect(ack.json["accepted"] as? Int == 4, "\(ack.text)")
            let cookie = try Self.cookie(try await Self.login(client, token: server.readToken))
            for uri in [
                "/ui/notifications/\(id)", "/ui/search?device=\(hostile.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
            ] {
                let page = try await Self.page(client, uri, cookie: cookie)
                #expect(page.status == .ok, "\(uri)")
                #expect(!page.text.contains("<script>alert"), "\(uri)")
                #expect(!page.text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(uri)")
                #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(uri)")
                #expect(page.text.contains("\\u{202E}"), "\(uri)")
                Self.expectSecured(page)
            }
        }
    }

    @Test func badInputGetsAPageNeverAStackTrace() async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(
                try await client.upload(
                    Bodies.events(app: TestServer.otherApp, notification: "theirs"), token: server.adminToken, path: "/v1/events"
                ).status == .ok)
            let cookie = try Self.cookie(try await Self.login(client, token: server.readToken))
            // An admin who names no app gets the first app's report, with the field to switch.
            let admin = try Self.cookie(try await Self.login(client, token: server.adminToken))
            let report = try await Self.page(client, "/ui/reports/weekly", cookie: admin)
            #expect(report.status == .ok)
            #expect(report.text.contains("id=\"r-app\""))
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("/ui/notifications/never-sent", .notFound, "Nothing is stored"),
                ("/ui/notifications/theirs", .notFound, "Nothing is stored"),
                ("/ui/notifications/theirs?app=\(TestServer.otherApp)", .forbidden, "reads app"),
                ("/ui/reports/weekly?week=2026-W99", .badRequest, "is not an ISO week"),
                ("/ui/reports/weekly?week=%3Cscript%3E", .badRequest, "&lt;script&gt;"),
                ("/ui/search?since=yesterday", .badRequest, "is not a time"),
                ("/ui/search?until=2026-13-45", .badRequest, "is not a time"),
                ("/ui/search?cause=gremlins", .badRequest, "is not a cause"),
                ("/ui/search?page=100000", .badRequest, "page must be"),
                ("/ui/notifications/%01%02", .badRequest, "notification ID"),
                ("/ui/no-such-page", .notFound, "no such endpoint"),
            ]
            for (uri, status, words) in cases {
                let page = try await Self.page(client, uri, cookie: cookie)
                #expect(page.status == status, "\(uri): \(page.text)")
                #expect(page.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
                #expect(page.text.contains(words), "\(uri): \(page.text)")
                #expect(!page.text.contains("<script>"), "\(uri)")
                Self.expectSecured(page)
            }
        }
    }

    @Test(arguments: TestEngine.all)
    func liveFollowStreamsTheUploadAndEndsOnceTheCauseIsFinal(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let id = "follow-1"
        try await server.run { client in
            #expect(try await client.upload(Bodies.events(notification: id), token: server.ingestToken, path: "/v1/events").status == .ok)
            let port = try #require(client.port)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/notifications/\(id)/events")
            request.headers.add(name: "Authorization", value: "Bearer \(server.readToken)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true)
            var text = ""
            var uploaded = false
            for try await chunk in response.body {
                text += String(buffer: chunk)
                if !uploaded, text.contains("awaiting_device_logs") {
                    uploaded = true
                    let lines = [Lines.manifest(app: TestServer.app)] + Lines.serviceSteps(id, expired: true)
                    #expect(try await client.upload(Bodies.gzip(lines), token: server.ingestToken).status == .ok)
                }
            }
            #expect(uploaded)
            #expect(text.contains("event: record\ndata: {"))
            #expect(text.contains("\"event\":\"service.expired\""))
            #expect(text.contains("\"cause\":\"service_timeout\""))
            #expect(text.contains("\"final\":true"))
            #expect(text.hasSuffix("event: end\ndata: {\"reason\":\"final\"}\n\n"))

            try expectError(
                try await client.get("/v1/notifications/unknown-1/events", token: server.readToken), .notFound, "unknown_notification")
            try expectError(try await client.get("/v1/notifications/\(id)/events", token: server.ingestToken), .forbidden, "forbidden")
        }
    }

    @Test func liveStreamsAreBoundedPerTokenAndEndWhenIdle() async throws {
        let server = try await TestServer {
            $0.liveFollow.streamsPerToken = 1
            // Long enough that the first stream is still open when the second asks, on a machine busy with the
            // other suites: the second request's sign-in and reads wait their turn on the two cores (at 1 s and at
            // 3 s it ended first).
            $0.liveFollow.idle = .seconds(10)
        }
        try await server.run { client in
            #expect(
                try await client.upload(Bodies.events(notification: "idle-1"), token: server.ingestToken, path: "/v1/events").status == .ok)
            let port = try #require(client.port)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/notifications/idle-1/events")
            request.headers.add(name: "Authorization", value: "Bearer \(server.readToken)")
            // Streams through a client of their own, with time to spare: on a loaded machine a stream's reads of the
            // store wait their turn on the shared thread pool.
            let first = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
            let second = try await client.get("/v1/notifications/idle-1/events", token: server.readToken)
            try expectError(second, .tooManyRequests, "too_many_streams")
            let body = String(buffer: try await first.body.collect(upTo: 1 << 20))
            #expect(body.hasSuffix("event: end\ndata: {\"reason\":\"idle\"}\n\n"))
            // Its place is given back once it ends.
            try await Task.sleep(for: .milliseconds(100))
            let again = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
            #expect(again.status == .ok)
            _ = try await again.body.collect(upTo: 1 << 20)
        }
    }

    @Test func failedSignInsAreCountedPerIPv6Network() {
        #expect(LoginThrottle.key("203.0.113.9") == "203.0.113.9")
        #expect(LoginThrottle.key("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(LoginThrottle.key("2001:db8:1:2:bbbb:cccc:dddd:eeee") == "2001:db8:1:2::/64")
        #expect(LoginThrottle.key("2001:db8::1") == "2001:db8:0:0::/64")
        #expect(LoginThrottle.key(nil) == "unknown")
        let throttle = LoginThrottle(freeFailures: 1)
        #expect(throttle.failed("a") == nil)
        #expect(throttle.failed("a") == 2)
        #expect(throttle.wait(for: "a") != nil)
        #expect(throttle.wait(for: "b") == nil)
        // A first wait under a second still slows the next try by one: Retry-After counts whole seconds.
        let brief = LoginThrottle(freeFailures: 0, firstWait: 0.5)
        #expect(brief.failed("c") == 1)
        #expect(brief.wait(for: "c") == 1)
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }
}
