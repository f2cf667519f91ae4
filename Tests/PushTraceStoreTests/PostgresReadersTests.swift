import Logging
import PostgresNIO
import PushTraceStore
import Testing

@testable import PushTracePostgres

/// The awaited reads' connections (``PostgresStore/awaiting(_:_:)``), leased from postgres-nio's `PostgresClient`.
@Suite("PostgreSQL: the readers' connections")
struct PostgresReadersTests {
    @Test(
        "a lease is waited for no longer than its limit: postgres-nio's pool waits for ever on a database it cannot reach",
        .timeLimit(.minutes(1)))
    func leaseIsBounded() async throws {
        // Nothing listens on port 1: each connection attempt is refused, and the pool tries again.
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let client = PostgresClient(
            configuration: .init(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none", tls: .disable),
            backgroundLogger: quiet)
        let running = Task { await client.run() }
        defer { running.cancel() }
        await #expect {
            try await PostgresStore.withLease(client, limit: .seconds(1), location: "nowhere") { _ in true }
        } throws: { ($0 as? StoreError)?.code == .noAnswer }
        // A caller cancelled while it waits (a server stopping) is told so, not that the database is down.
        let waiting = Task { try await PostgresStore.withLease(client, limit: .seconds(600), location: "nowhere") { _ in true } }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
