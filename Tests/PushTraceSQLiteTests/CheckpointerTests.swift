import Foundation
import GRDB
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

@Suite("Checkpointing the write-ahead log off the writer")
struct CheckpointerTests {
    @Test("a log past the threshold is copied into the database file while the store stays open")
    func logIsCheckpointedInTheBackground() async throws {
        let temporary = try TemporaryStore()
        let before = try fileSize(temporary.path)
        // About 8 MB in one commit: some 2,000 pages of log, twice the threshold.
        try await temporary.sqlite.pool.write { db in
            try db.execute(sql: "CREATE TABLE filler (blob BLOB)")
            for _ in 0..<2_000 { try db.execute(sql: "INSERT INTO filler VALUES (zeroblob(4000))") }
        }
        var after = try fileSize(temporary.path)
        for _ in 0..<100 where after < before + 7_000_000 {
            try await Task.sleep(for: .milliseconds(100))
            after = try fileSize(temporary.path)
        }
        #expect(after >= before + 7_000_000, "the database file grew by \(after - before) bytes")
    }

    @Test("a store with a higher threshold (the server's) leaves a smaller log alone, and checkpoints once past it")
    func higherThreshold() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("test.sqlite").path
        let store = try SQLiteStore(path: path, checkpointPages: 4_000)
        let before = try fileSize(path)
        // Some 2,000 pages of log: half the threshold.
        try await store.pool.write { db in
            try db.execute(sql: "CREATE TABLE filler (blob BLOB)")
            for _ in 0..<2_000 { try db.execute(sql: "INSERT INTO filler VALUES (zeroblob(4000))") }
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try fileSize(path) < before + 1_000_000, "checkpointed below the threshold")
        // Some 2,500 pages more: past it.
        try await store.pool.write { db in
            for _ in 0..<2_500 { try db.execute(sql: "INSERT INTO filler VALUES (zeroblob(4000))") }
        }
        var after = try fileSize(path)
        for _ in 0..<100 where after < before + 17_000_000 {
            try await Task.sleep(for: .milliseconds(100))
            after = try fileSize(path)
        }
        #expect(after >= before + 17_000_000, "the database file grew by \(after - before) bytes")
        try store.close()
    }

    @Test("closing stops the checkpointer and checkpoints the rest: the log is empty, every row is in the file")
    func closeLeavesNoLog() throws {
        let temporary = try TemporaryStore()
        try temporary.sqlite.pool.write { db in
            try db.execute(sql: "CREATE TABLE filler (blob BLOB)")
            for _ in 0..<300 { try db.execute(sql: "INSERT INTO filler VALUES (zeroblob(4000))") }
        }
        try temporary.sqlite.close()
        let log = temporary.path + "-wal"
        #expect(try !FileManager.default.fileExists(atPath: log) || fileSize(log) == 0)
        let count = try DatabaseQueue(path: temporary.path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM filler") }
        #expect(count == 300)
    }

    private func fileSize(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    }
}
