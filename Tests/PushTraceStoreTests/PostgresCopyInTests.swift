import Foundation
import PostgresNIO
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTracePostgres

/// `COPY … FROM STDIN`, as `pushtrace copy` fills a PostgreSQL store: every value comes back as it went in, whatever
/// bytes its text holds, and a row PostgreSQL refuses fails the copy in its own words.
@Suite("PostgreSQL: rows copied in")
struct PostgresCopyInTests {
    @Test(
        "text with backslashes, tabs, newlines and \\N, any bytes, NULLs, extreme integers and reals come back as sent",
        .enabled(if: TestEngine.postgresCluster != nil))
    func valuesComeBackAsSent() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        let store = try PostgresStore(url: try #require(temporary.url), connections: 2)
        defer { try? store.close() }
        let rows: [[SQLValue]] = [
            [.integer(1), .text("a\tb\nc\\d\r\\N"), .bytes([0, 92, 255, 10, 9, 78]), .real(1.5)],
            [.integer(2), .text("\\N"), .bytes([]), .real(-0.25)],
            [.integer(3), .text(""), .null, .null],
            [.integer(Int64.max), .text("é🙂 \u{1}"), .bytes(Array(0...255)), .real(.infinity)],
            [.integer(Int64.min), .null, .bytes([92, 120]), .real(1e-300)],
        ]
        let back = try store.withSession { session in
            try session.query("CREATE TEMPORARY TABLE t (n bigint PRIMARY KEY, s text, b bytea, r float8)")
            try session.copyIn(into: "t", columns: ["n", "s", "b", "r"], Array(rows.prefix(2)))
            try session.copyIn(into: "t", columns: ["n", "s", "b", "r"], Array(rows.dropFirst(2)))
            return try session.sqlRows("SELECT n, s, b, r FROM t ORDER BY n")
        }
        #expect(back.map(\.values) == [rows[4], rows[0], rows[1], rows[2], rows[3]])
    }

    @Test("a refused row fails the copy in PostgreSQL's words, and nothing of it is kept", .enabled(if: TestEngine.postgresCluster != nil))
    func refusedRowFailsTheCopy() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        let store = try PostgresStore(url: try #require(temporary.url), connections: 2)
        defer { try? store.close() }
        try store.withSession { session in
            try session.query("CREATE TEMPORARY TABLE t (n bigint PRIMARY KEY)")
            do {
                try session.copyIn(into: "t", columns: ["n"], [[.integer(1)], [.integer(2)], [.integer(1)]])
                Issue.record("the copy was accepted")
            } catch {
                guard case .refused(_, let state, _, _)? = store.explaining(error) as? StoreError else {
                    Issue.record("not refused: \(error)")
                    return
                }
                #expect(state == "23505")
            }
            #expect(try session.query("SELECT count(*) FROM t").first(where: { _ in true })!.decode(Int64.self) == 0)
        }
    }
}
