import Foundation
import PostgresNIO
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTracePostgres

/// Statements sent without waiting for their answers (`SQLSession.send`): a failure among them is thrown by the next
/// wait in PostgreSQL's own words, never lost, and never in place of the transaction it aborted.
@Suite("PostgreSQL: statements sent without waiting")
struct PostgresSentStatementsTests {
    @Test(
        "a sent statement's failure is the next wait's error, a savepoint's is its own, and a swallowed one fails COMMIT",
        .enabled(if: TestEngine.postgresCluster != nil))
    func failuresOfSentStatementsAreThrown() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        let store = try PostgresStore(url: try #require(temporary.url), connections: 2)
        defer { try? store.close() }
        func state(_ error: any Error) -> String {
            guard case .refused(_, let state, _, _)? = store.explaining(error) as? StoreError else { return "\(error)" }
            return state
        }
        try store.withSession { session in
            func send(_ sql: String) { session.send(PostgresQuery(unsafeSQL: sql)) }
            func count() throws -> Int64 { try session.query("SELECT count(*) FROM t").first(where: { _ in true })!.decode(Int64.self) }
            try session.query("CREATE TEMPORARY TABLE t (n int PRIMARY KEY)")
            // Division by zero (22012), not the "transaction aborted" (25P02) of the statement waited for after it.
            do {
                try session.transaction {
                    send("INSERT INTO t VALUES (1)")
                    send("SELECT 1 / 0")
                    try session.query("SELECT 1")
                }
                Issue.record("the transaction committed")
            } catch {
                #expect(state(error) == "22012")
            }
            #expect(try count() == 0)
            // A failure sent inside a savepoint is the savepoint's (a duplicate key, 23505); the transaction goes on.
            try session.transaction {
                send("INSERT INTO t VALUES (2)")
                do {
                    try session.savepoint { send("INSERT INTO t VALUES (2)") }
                    Issue.record("the savepoint was released")
                } catch {
                    #expect(state(error) == "23505")
                }
                send("INSERT INTO t VALUES (3)")
            }
            #expect(try count() == 2)
            // PostgreSQL answers COMMIT after a failure something swallowed with ROLLBACK: that is an error too.
            do {
                try session.transaction {
                    send("INSERT INTO t VALUES (4)")
                    _ = try? session.query("SELECT 1 / 0")
                }
                Issue.record("the transaction committed")
            } catch {
                #expect(state(error) == "25P02")
            }
            #expect(try count() == 2)
        }
        // Sent outside a transaction and never waited for: thrown when the session is given back.
        do {
            try store.withSession { $0.send(PostgresQuery(unsafeSQL: "SELECT 1 / 0")) }
            Issue.record("the failure was lost")
        } catch {
            #expect(state(error) == "22012")
        }
    }

    @Test(
        "statements sent on a connection that has closed fail at the next wait, which does not hang",
        .enabled(if: TestEngine.postgresCluster != nil))
    func sentOnAClosedConnection() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        let store = try PostgresStore(url: try #require(temporary.url), connections: 2)
        defer { try? store.close() }
        do {
            try store.withSession { session in
                // A short deadline: were an answer never to come, the test fails in seconds rather than hangs.
                var session = session
                session.deadline = .seconds(3)
                let backend = try #require(try session.query("SELECT pg_backend_pid()").first(where: { _ in true })).decode(Int32.self)
                try store.withSession { other in try other.query(PostgresQuery(unsafeSQL: "SELECT pg_terminate_backend(\(backend))")) }
                let start = ContinuousClock.now
                while !session.connection.isClosed && ContinuousClock.now - start < .seconds(10) { usleep(10_000) }
                #expect(session.connection.isClosed)
                // postgres-nio drops a statement written to a closed connection without answering it.
                session.send(PostgresQuery(unsafeSQL: "SELECT 1"))
                session.send(PostgresQuery(unsafeSQL: "SELECT 2"))
                try session.settle()
            }
            Issue.record("statements on a closed connection succeeded")
        } catch {
            #expect(PostgresFailure(error).isUnavailable, "\(error)")
        }
    }
}
