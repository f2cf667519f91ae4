import Foundation
import HTTPTypes
import HummingbirdTesting
import PushTraceCore
import PushTraceGzip
import PushTraceServer
import PushTraceTestSupport
import Testing

/// `POST /v1/bundles` and `POST /v1/events` against a live server: every answer of docs/spec.md §8, and the store unchanged
/// after every error.
@Suite struct IngestEndpointTests {
    @Test(arguments: TestEngine.all)
    func storesABundleAndAcknowledgesItsDuplicate(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let bundleID = UUID().uuidString.lowercased()
        let body = Bodies.bundle(bundle: bundleID)
        try await server.run { client in
            let first = try await client.upload(body, token: server.ingestToken)
            #expect(first.status == .ok)
            #expect(first.json["bundle_id"] as? String == bundleID)
            #expect(first.json["accepted"] as? Int == 3)
            #expect(first.json["rejected"] as? Int == 0)
            #expect(first.json["duplicate"] as? Bool == false)
            let again = try await client.upload(body, token: server.ingestToken)
            #expect(again.status == .ok)
            #expect(again.json["duplicate"] as? Bool == true)
        }
        let counts = try server.counts()
        #expect(counts["bundle"] == 1)
        #expect(counts["record"] == 3)
    }

    #if os(Linux)
        @Test("the writer runs on a thread named for top -H and perf")
        func namesItsThreads() async throws {
            let server = try await TestServer()
            try await server.run { client in
                #expect(try await client.upload(Bodies.bundle(), token: server.ingestToken).status == .ok)
                // Threads of tests running beside this one are listed too, and may end while being read.
                let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap {
                    try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
                }
                #expect(names.contains("pt-writer"), "\(names)")
            }
        }
    #endif

    @Test(arguments: TestEngine.all)
    func takesTheBackendsEventsAndRefusesADeviceBundleThere(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        try await server.run { client in
            let events = try await client.upload(
                Bodies.events(notification: "n-1"), token: server.ingestToken,
                path: "/v1/events")
            #expect(events.status == .ok)
            #expect(events.json["accepted"] as? Int == 2)
            let device = try await client.upload(Bodies.bundle(), token: server.ingestToken, path: "/v1/events")
            try expectError(device, .badRequest, "bad_request")
        }
        #expect(try server.counts()["bundle"] == 1)
    }

    @Test(arguments: TestEngine.all)
    func readsEveryGzipMemberAndPlainNDJSON(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let lines = [Lines.manifest(app: TestServer.app)] + Lines.serviceSteps("n-2") + Lines.serviceSteps("n-3")
        let members = Bodies.gzip(Array(lines[0..<2])) + Bodies.gzip(Array(lines[2...]))
        try await server.run { client in
            let gzip = try await client.upload(members, token: server.ingestToken)
            #expect(gzip.json["accepted"] as? Int == 6)
            let plain = Array(([Lines.manifest(app: TestServer.app)] + Lines.serviceSteps("n-4")).joined(separator: "\r\n").utf8)
            let identity = try await client.upload(plain, token: server.ingestToken, encoding: "identity")
            #expect(identity.json["accepted"] as? Int == 3)
            // Content-Encoding is case-insensitive (RFC 9110 §8.4.1).
            let named = try await client.upload(Bodies.bundle(), token: server.ingestToken, encoding: "X-GZip")
            #expect(named.json["accepted"] as? Int == 3)
        }
    }

    @Test(arguments: TestEngine.all)
    func refusesUndecodableBodiesWith400(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let before = try server.counts()
        let whole = Bodies.bundle()
        try await server.run { client in
            let truncated = try await client.upload(Array(whole.dropLast(9)), token: server.ingestToken)
            try expectError(truncated, .badRequest, "undecodable")
            let notGzip = try await client.upload(Array("hello".utf8), token: server.ingestToken)
            try expectError(notGzip, .badRequest, "undecodable")
            let noManifest = try await client.upload(Bodies.gzip(Lines.serviceSteps("n-5")), token: server.ingestToken)
            try expectError(noManifest, .badRequest, "undecodable")
            #expect(noManifest.json["message"] as? String ?? "" != "")
        }
        #expect(try server.counts() == before)
    }

    @Test(arguments: TestEngine.all)
    func refusesMissingAndUnknownTokensWith401(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let before = try server.counts()
        try await server.run { client in
            try expectError(try await client.upload(Bodies.bundle(), token: nil), .unauthorized, "unauthorized")
            try expectError(try await client.upload(Bodies.bundle(), token: "pt_000000000000_nope"), .unauthorized, "unauthorized")
            try expectError(try await client.upload(Bodies.bundle(), token: "garbage"), .unauthorized, "unauthorized")
        }
        #expect(try server.counts() == before)
    }

    @Test func readsTheBearerSchemeInAnyCaseWithBlanksAroundTheToken() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let accepted = try await client.upload(
                Bodies.bundle(), token: nil,
                extra: [.authorization: "bEARER \t\(server.ingestToken) \t"])
            #expect(accepted.status == .ok)
            for header in ["Basic \(server.ingestToken)", "Bearer", "Bearer \t ", "Bearer\(server.ingestToken)"] {
                try expectError(
                    try await client.upload(Bodies.bundle(), token: nil, extra: [.authorization: header]),
                    .unauthorized, "unauthorized")
            }
        }
        #expect(try server.counts()["bundle"] == 1)
    }

    @Test func refusesARevokedTokenOnceItsCacheTimeHasPassed() async throws {
        let server = try await TestServer { $0.tokenCacheSeconds = 0.2 }
        let (info, text) = try await server.folder.store.createToken(appID: TestServer.app, scope: .ingest, label: "ci", now: Lines.t0)
        try await server.run { client in
            #expect(try await client.upload(Bodies.bundle(), token: text.text).status == .ok)
            #expect(try await server.folder.store.revokeToken(id: info.id, now: Lines.t0 + 1))
            try await Task.sleep(for: .milliseconds(300))
            try expectError(try await client.upload(Bodies.bundle(), token: text.text), .unauthorized, "unauthorized")
            // The same ID with another secret is not the token.
            let forged = "pt_\(info.id)_\(text.secret.dropLast())\(text.secret.last == "A" ? "B" : "A")"
            try expectError(try await client.upload(Bodies.bundle(), token: forged), .unauthorized, "unauthorized")
        }
        #expect(try server.counts()["bundle"] == 1)
    }

    @Test(arguments: TestEngine.all)
    func refusesAnotherAppsBundleAndTheWrongScopeWith403(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let before = try server.counts()
        try await server.run { client in
            let otherApp = try await client.upload(Bodies.bundle(app: TestServer.app), token: server.otherAppToken)
            try expectError(otherApp, .forbidden, "forbidden")
            #expect((otherApp.json["message"] as? String ?? "").contains(TestServer.app))
            let readScope = try await client.upload(Bodies.bundle(), token: server.readToken)
            try expectError(readScope, .forbidden, "forbidden")
        }
        #expect(try server.counts() == before)
    }

    @Test func refusesOversizedBodiesWith413() async throws {
        let server = try await TestServer { settings in
            settings.maxBodyBytes = 64 << 10
            settings.limits.maxDecompressedBytes = 1 << 20
        }
        let before = try server.counts()
        // Over the raw cap: random bytes do not compress.
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(100 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Under the raw cap, over the decompressed cap: 4 MiB of one repeated record compress to a few KiB.
        let record = Lines.serviceSteps("n-6")[1] + "\n"
        let bomb = Deflater.gzip(
            Array((Lines.manifest(app: TestServer.app) + "\n" + String(repeating: record, count: 40_000)).utf8),
            level: 9)
        #expect(bomb.count < 64 << 10)
        try await server.run { client in
            try expectError(try await client.upload(bomb, token: server.ingestToken), .contentTooLarge, "too_large")
            // Refused from its Content-Length before it is read; the connection closes after the answer.
            let unread = try await client.upload(noise, token: server.ingestToken)
            try expectError(unread, .contentTooLarge, "too_large")
            #expect(unread.headers[.connection] == "close")
        }
        #expect(try server.counts() == before)
    }

    @Test func refusesAnUnknownEncodingWith415() async throws {
        let server = try await TestServer()
        let before = try server.counts()
        try await server.run { client in
            try expectError(
                try await client.upload(Bodies.bundle(), token: server.ingestToken, encoding: "br"),
                .unsupportedMediaType, "unsupported_encoding")
        }
        #expect(try server.counts() == before)
    }

    @Test func answers429WhenTheQueueIsFullAndStoresTheRestOnce() async throws {
        let server = try await TestServer { settings in
            settings.queueCapacity = 1
            settings.maxBundlesPerCommit = 1
        }
        var withLongTimeout = server
        withLongTimeout.busyTimeout = 30
        let lock = try server.holdWriteLock()
        let uploads = try await withLongTimeout.run { client in
            try await concurrentUploads(6, port: client.port!, token: server.ingestToken) {
                // Give the uploads time to fill the queue, then let the writer go. The other tests run meanwhile and
                // hold the cores, so the six requests may take seconds to reach the queue.
                try await Task.sleep(for: .seconds(5))
                try lock.release()
            }
        }
        let refused = uploads.filter { $0.status == 429 }
        #expect(refused.count >= 1)
        #expect(refused.allSatisfy { $0.retryAfter == "1" })
        #expect(uploads.allSatisfy { $0.status == 200 || $0.error == "overloaded" })
        #expect(try server.counts()["bundle"] == uploads.filter { $0.status == 200 }.count)
    }

    @Test func answers503WhenTheStoreCannotCommitAndLeavesNothingBehind() async throws {
        let server = try await TestServer()
        let before = try server.counts()
        let lock = try server.holdWriteLock()
        try await server.run { client in
            let response = try await client.upload(Bodies.bundle(), token: server.ingestToken)
            try expectError(response, .serviceUnavailable, "unavailable")
            #expect(response.headers[.retryAfter] == "5")
        }
        try lock.release()
        #expect(try server.counts() == before)
    }

    @Test func answers503WhenTheDiskIsFullAndLeavesNothingBehind() async throws {
        var server = try await TestServer()
        server.diskFull = true
        let before = try server.counts()
        try await server.run { [server] client in
            let bundle = Bodies.gzip([Lines.manifest(app: TestServer.app)] + (1...500).flatMap { Lines.serviceSteps("n-\($0)") })
            let response = try await client.upload(bundle, token: server.ingestToken)
            try expectError(response, .serviceUnavailable, "unavailable")
            #expect(
                response.json["message"] as? String
                    == "the store cannot answer (nothing was committed): the server's disk is full; the server's log has more under this request_id"
            )
            #expect(response.headers[.retryAfter] == "5")
        }
        #expect(try server.counts() == before)
    }

    @Test func failsEveryBundleOfAGroupWith503WhileTheStoreIsLocked() async throws {
        let server = try await TestServer()
        let before = try server.counts()
        let lock = try server.holdWriteLock()
        let uploads = try await server.run { client in
            try await concurrentUploads(6, port: client.port!, token: server.ingestToken)
        }
        try lock.release()
        #expect(uploads.count == 6)
        #expect(uploads.allSatisfy { $0.status == 503 && $0.error == "unavailable" })
        #expect(try server.counts() == before)
    }

    @Test func onlyAnAdminMayReplayAnArchivedUpload() async throws {
        let server = try await TestServer()
        let archived: HTTPFields = [IngestRoutesTesting.receivedAtHeader: "2025-11-20T07:00:00Z"]
        try await server.run { client in
            try expectError(
                try await client.upload(Bodies.bundle(), token: server.ingestToken, extra: archived),
                .forbidden, "forbidden")
            let replay = try await client.upload(Bodies.bundle(), token: server.adminToken, extra: archived)
            #expect(replay.status == .ok)
        }
    }
}

enum IngestRoutesTesting {
    static let receivedAtHeader = HTTPField.Name("Pushtrace-Received-At")!
}

/// The response is an error of docs/spec.md §8: this status, a JSON body with this code and a message.
func expectError(
    _ response: TestResponse, _ status: HTTPResponse.Status, _ code: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
    #expect(response.headers[.contentType] == "application/json", sourceLocation: sourceLocation)
    #expect(response.json["error"] as? String == code, "\(response.text)", sourceLocation: sourceLocation)
    #expect(!(response.json["message"] as? String ?? "").isEmpty, sourceLocation: sourceLocation)
}
