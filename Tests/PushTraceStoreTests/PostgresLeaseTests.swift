import Foundation
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTracePostgres

/// Leadership of the shared tasks and retention passes on PostgreSQL: lease rows, which hold the same whether the
/// connection is direct or lent by PgBouncer in transaction pooling (scripts/with-postgres.sh runs one).
@Suite("PostgreSQL: leases, direct and through a transaction pooler")
struct PostgresLeaseTests {
    /// The ways the test reaches a store's database: directly, and through PgBouncer when the cluster has one.
    static func routes(to url: String) throws -> [(name: String, url: String)] {
        var routes = [("direct", url)]
        if let bouncer = ProcessInfo.processInfo.environment["PUSHTRACE_TEST_PGBOUNCER"],
            var pooled = URLComponents(string: bouncer), let database = URLComponents(string: url)?.path
        {
            pooled.path = database
            pooled.query = "pool_mode=transaction"
            routes.append(("PgBouncer, pool_mode=transaction", pooled.string!))
        }
        return routes
    }

    @Test(
        "one store at a time leads a task: the holder renews it, another takes it once it is given back or expires",
        .enabled(if: TestEngine.postgresCluster != nil))
    func leadership() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        for (route, url) in try Self.routes(to: try #require(temporary.url)) {
            let first = try PostgresStore(url: url, connections: 2)
            let second = try PostgresStore(url: url, connections: 2)
            defer { try? second.close() }
            #expect(try first.leads(.alertMonitor, for: .seconds(30)), "\(route)")
            #expect(try !second.leads(.alertMonitor, for: .seconds(30)), "\(route)")
            #expect(try first.leads(.alertMonitor, for: .seconds(30)), "\(route): renewed")
            // A holder that closes gives its leases back at once.
            try first.close()
            #expect(try second.leads(.alertMonitor, for: .seconds(1)), "\(route)")
            // One that stops asking loses the role when its lease expires.
            let third = try PostgresStore(url: url, connections: 2)
            defer { try? third.close() }
            #expect(try !third.leads(.alertMonitor, for: .seconds(30)), "\(route)")
            Thread.sleep(forTimeInterval: 1.3)
            #expect(try third.leads(.alertMonitor, for: .seconds(30)), "\(route): after the lease expired")
            #expect(try !second.leads(.alertMonitor, for: .seconds(30)), "\(route)")
        }
    }

    @Test(
        "a retention pass runs on one store at a time: another finds the lease held and deletes nothing, then deletes once it is given back",
        .enabled(if: TestEngine.postgresCluster != nil))
    func retention() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        for (route, url) in try Self.routes(to: try #require(temporary.url)) {
            try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("old-\(route.count)"))
            let holder = try PostgresStore(url: url, connections: 2)
            let other = try PostgresStore(url: url, connections: 2)
            defer { try? other.close() }
            #expect(try holder.withSession { try holder.leadership.take(PostgresLeadership.retention, forSeconds: 60, $0) })
            let far = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
            #expect(try other.deleteExpired(before: far, batchSize: 100, progress: nil).bundles == 0, "\(route)")
            try holder.close()
            #expect(try other.deleteExpired(before: far, batchSize: 100, progress: nil).bundles == 1, "\(route)")
            // The pass gave its lease back: the next may run at once.
            #expect(try temporary.store.deleteExpired(before: far, batchSize: 100, progress: nil).bundles == 0, "\(route)")
            #expect(
                try other.withSession { try $0.query("SELECT count(*) FROM lease").first(where: { _ in true })!.decode(Int64.self) } == 0)
        }
    }

    @Test(
        "through PgBouncer: a URL without pool_mode is refused with what to add; with pool_mode=transaction, a why that prepares no statement",
        .enabled(if: TestEngine.postgresCluster != nil && ProcessInfo.processInfo.environment["PUSHTRACE_TEST_PGBOUNCER"] != nil))
    func poolMode() async throws {
        let temporary = try TemporaryStore(engine: .postgres)
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        let routes = try Self.routes(to: try #require(temporary.url))
        let pooled = try #require(routes.last?.url)
        let bare = pooled.replacingOccurrences(of: "?pool_mode=transaction", with: "")
        do {
            _ = try PostgresStore(url: bare, connections: 2)
            Issue.record("PgBouncer took the keepalive settings")
        } catch {
            #expect("\(error)".contains("add pool_mode=transaction"), "\(error)")
        }
        let store = try PostgresStore(url: pooled, connections: 4)
        defer { try? store.close() }
        // pushtrace sql would leave its session's settings on a server connection the servers use next.
        #expect(throws: StoreError.needsDirectConnection) {
            try store.readOnlyQuery("SELECT 1", columns: { _ in }, row: { _ in })
        }
        // Many times, on a pool of several server connections: a statement prepared on one would be missing on another.
        for _ in 0..<20 {
            #expect(try await store.why(appID: "net.rorklab.dailypick", notificationID: "n-1").timeline.isEmpty == false)
        }
    }
}
