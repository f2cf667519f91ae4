import Foundation
import NIOConcurrencyHelpers
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceServer

@Suite("Token lookups: a token ID sent again and again costs one store read")
struct TokenCacheTests {
    @Test(
        "made-up tokens, sent again and again, cost one read per distinct ID; a wrong secret for a known ID none", arguments: TestEngine.all
    )
    func madeUpTokensAreReadOncePerID(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine) { $0.tokenCacheSeconds = 60 }
        let real = try #require(TokenText(server.ingestToken))
        try await server.run { client in
            let ids = (0..<100).map { String(format: "%012llx", 0xabc0_0000_0000 + UInt64($0)) }
            for round in 0..<3 {
                for id in ids {
                    let response = try await client.upload(Bodies.bundle(), token: "pt_\(id)_madeup\(round)")
                    #expect(response.status == .unauthorized)
                }
            }
            for n in 0..<20 {
                let forged = try await client.upload(Bodies.bundle(), token: "pt_\(real.id)_wrong\(n)")
                #expect(forged.status == .unauthorized)
            }
            #expect(try await client.upload(Bodies.bundle(), token: server.ingestToken).status == .ok)
            let metrics = try await client.get("/metrics", token: nil).text
            #expect(metrics.contains(#"pushtrace_token_lookups_total{outcome="absent"} 100"#), "\(metrics)")
            #expect(metrics.contains(#"pushtrace_token_lookups_total{outcome="found"} 1"#), "\(metrics)")
        }
    }

    @Test("a read that failed is not remembered: the next request reads again")
    func failedReadIsNotRemembered() async throws {
        let cache = TokenCache(foundSeconds: 60)
        let reads = NIOLockedValueBox(0)
        struct Unreachable: Error {}
        await #expect(throws: Unreachable.self) {
            try await cache.token(id: "ba9876543210") { throw Unreachable() }
        }
        let retried = try await cache.token(id: "ba9876543210") {
            reads.withLockedValue { $0 += 1 }
            return nil
        }
        #expect(retried == nil && reads.withLockedValue { $0 } == 1)
        _ = try await cache.token(id: "ba9876543210") {
            Issue.record("read again")
            return nil
        }
    }

    @Test("absent IDs past the bound push out the oldest absent ones, never a found token")
    func absentIDsAreBounded() async throws {
        let cache = TokenCache(foundSeconds: 60, absentLimit: 10)
        let reads = NIOLockedValueBox(0)
        let text = TokenText.generate()
        let stored = StoredToken(
            id: text.id, appID: "app", scope: "ingest", label: nil, createdAt: 0, revokedAt: nil,
            secretSHA256: text.secretHash)
        _ = try await cache.token(id: text.id) { stored }
        for n in 0..<50 {
            _ = try await cache.token(id: String(format: "%012x", n)) {
                reads.withLockedValue { $0 += 1 }
                return nil
            }
        }
        #expect(
            try await cache.token(id: text.id) {
                Issue.record("read again")
                return nil
            } == stored)
        // The newest absent IDs are still remembered; the oldest were let go.
        _ = try await cache.token(id: String(format: "%012x", 49)) {
            Issue.record("read again")
            return nil
        }
        _ = try await cache.token(id: String(format: "%012x", 0)) {
            reads.withLockedValue { $0 += 1 }
            return nil
        }
        #expect(reads.withLockedValue { $0 } == 51)
    }
}
