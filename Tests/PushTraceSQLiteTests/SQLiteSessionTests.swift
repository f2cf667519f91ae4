import GRDB
import PushTraceStore
import Testing

@testable import PushTraceSQLite

/// The SQLite session binds each value as SQLite's own type and reads rows from the statement itself: what goes in
/// comes back, and a cached statement bound again holds only its new values.
@Suite("SQLite's SQL session")
struct SQLiteSessionTests {
    @Test("every kind of value is bound and read back as it was, through a statement reused from the cache")
    func roundTrip() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            let session = SQLiteSession(db: db)
            try session.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c, d, e)")
            let rows: [[SQLValue]] = [
                [.integer(1), .null, .integer(-42), .real(2.5), .text("x' OR '1'='1 ✓"), .bytes([0, 1, 255])],
                [.integer(2), .text(""), .integer(Int64.max), .real(-0.0), .null, .bytes([])],
            ]
            for row in rows {
                try session.execute(
                    "INSERT INTO t (k, a, b, c, d, e) VALUES (\(row[0]), \(row[1]), \(row[2]), \(row[3]), \(row[4]), \(row[5]))")
            }
            for row in rows {
                let read = try session.rows("SELECT k, a, b, c, d, e FROM t WHERE k = \(row[0])")
                #expect(read.count == 1)
                #expect(read.first?.columns.names == ["k", "a", "b", "c", "d", "e"])
                // SQLite keeps an empty blob as a zero-length blob, and reads it back as one.
                #expect(read.first?.values == row)
            }
            #expect(try session.rows("SELECT k FROM t WHERE k = \(3)").isEmpty)
        }
    }
}
