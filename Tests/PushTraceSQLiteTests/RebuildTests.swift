import Foundation
import GRDB
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

@Suite("SQLiteStore: rebuild (vacuum)")
struct RebuildTests {
    @Test("after retention, the rebuilt file is about the pages in use, the log is emptied, answers are unchanged")
    func vacuumAfterRetention() async throws {
        let temporary = try storeAfterRetention()
        let store = temporary.sqlite
        let reportBefore = try await ReportTests.reportJSON(store)
        let countsBefore = try temporary.counts()
        let room = try store.rebuildRoom()
        let fileBefore = try size(store.path)
        // Most of the file was deleted rows: what stays is the last day, the rollups and each app's dictionaries (two
        // each by now, the first superseded within the hour, so kept whole).
        #expect(room.liveBytes > 0 && room.liveBytes < fileBefore * 6 / 10, "\(room.liveBytes) of \(fileBefore)")
        #expect(room.shortfall == nil)

        try store.vacuum()

        let fileAfter = try size(store.path)
        #expect(fileAfter < fileBefore / 2)
        #expect(fileAfter <= room.liveBytes + room.liveBytes / 20)
        // The log carried the whole rebuilt file back; it is emptied, not left on disk at that size.
        #expect(try size(store.path + "-wal") == 0)
        try await store.pool.read { db throws in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
        }
        #expect(try temporary.counts() == countsBefore)
        #expect(try await ReportTests.reportJSON(store) == reportBefore)
    }

    @Test("after retention, a new store gives its free pages back in place, a step at a time; answers unchanged")
    func releaseInPlace() async throws {
        let temporary = try storeAfterRetention()
        let store = temporary.sqlite
        #expect(try store.releasesInPlace())
        let reportBefore = try await ReportTests.reportJSON(store)
        let countsBefore = try temporary.counts()
        let (pageSize, freeBefore) = try pages(store)
        let fileBefore = try size(store.path)
        #expect(freeBefore > 200)

        var steps: [(released: Int64, toGo: Int64)] = []
        let released = try store.releaseFreePages(pagesPerStep: 100) { released, toGo in
            steps.append((released, toGo))
            return true
        }

        // The free pages, and the few pointer-map pages that described them.
        #expect(released >= freeBefore * pageSize && released < freeBefore * pageSize * 102 / 100)
        #expect(steps.count >= Int(freeBefore / 100))  // small transactions, not one
        #expect(steps.first.map { $0.toGo == (freeBefore - 100) * pageSize } == true)
        #expect(steps.last?.toGo == 0)
        #expect(try pages(store).free == 0)
        #expect(try size(store.path) == fileBefore - released)
        #expect(try size(store.path + "-wal") == 0)
        try await store.pool.read { db throws in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
        }
        #expect(try temporary.counts() == countsBefore)
        #expect(try await ReportTests.reportJSON(store) == reportBefore)
        #expect(try store.releaseFreePages() == 0)
    }

    @Test("a store an older pushtrace created cannot give pages back in place until it is rebuilt; then it can")
    func olderStoreRebuilt() throws {
        let temporary = try TemporaryStore()
        let path = temporary.directory.path + "/older.sqlite"
        // Before this version, stores were created without auto_vacuum: a WAL file whose header is written.
        var configuration = Configuration()
        configuration.journalMode = .wal
        try DatabasePool(path: path, configuration: configuration).close()
        let store = try SQLiteStore(path: path)
        try store.pool.write { try $0.execute(sql: "CREATE TABLE filler(x); INSERT INTO filler VALUES (zeroblob(1000000))") }
        try store.pool.write { try $0.execute(sql: "DROP TABLE filler") }
        #expect(try !store.releasesInPlace())
        #expect(try pages(store).free > 200)
        #expect(try store.releaseFreePages() == 0)
        try store.vacuum()
        #expect(try store.releasesInPlace())
        #expect(try pages(store).free == 0)
    }

    @Test("the room a rebuild needs: twice the pages in use on one file system, once on each of two; the shortfall said")
    func shortfall() {
        let mega: Int64 = 1_000_000
        var room = RebuildRoom(
            liveBytes: 500 * mega, temporaryDirectory: "/var/tmp", freeBesideDatabase: 2_000 * mega,
            freeInTemporaryDirectory: nil)
        #expect(room.shortfall == nil)
        room.freeBesideDatabase = 900 * mega  // 2 × 510 MB (the copy and the log, with the log's margin) do not fit
        #expect(
            room.shortfall == "rebuilding needs 1020.0 MB free (a temporary copy of the 500.0 MB still in use, in "
                + "/var/tmp, and the log that carries it back), and 900.0 MB are")
        room.freeInTemporaryDirectory = 600 * mega  // on a file system of its own, each side needs one copy
        #expect(room.shortfall == nil)
        room.freeInTemporaryDirectory = 400 * mega
        room.freeBesideDatabase = 300 * mega
        #expect(
            room.shortfall == "rebuilding needs 510.0 MB for the temporary copy in /var/tmp, where 400.0 MB are free, "
                + "and 510.0 MB for the log beside the database, where 300.0 MB are free")
    }

    /// A simulated store of which retention has deleted all but the last day: most of its file is free pages.
    private func storeAfterRetention() throws -> TemporaryStore {
        let temporary = try ReportTests.simulatedStore(seed: 12, notifications: 2_000)
        let cutoff =
            try temporary.sqlite.pool.read { db in
                try #require(try Int64.fetchOne(db, sql: "SELECT max(received_at) FROM bundle"))
            } - 86_400_000
        _ = try temporary.sqlite.deleteExpired(before: cutoff)
        return temporary
    }

    /// The page size, and how many pages are free.
    private func pages(_ store: SQLiteStore) throws -> (size: Int64, free: Int64) {
        try store.pool.read { db in
            (try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0, try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0)
        }
    }

    private func size(_ path: String) throws -> Int64 {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        return (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
