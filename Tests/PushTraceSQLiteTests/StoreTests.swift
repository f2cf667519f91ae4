import Foundation
import GRDB
import PushTraceCore
import PushTraceGzip
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

@Suite("SQLiteStore: ingest, correlation, idempotency")
struct StoreTests {

    @Test("summaries merged in memory across a group commit equal those upserted bundle by bundle")
    func groupMergeMatchesBundleByBundle() throws {
        let grouped = try TemporaryStore(), single = try TemporaryStore()
        let bundles = grouped.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: 11, notifications: 300), into: bundles)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        // All the files in one group commit (the CLI's 2-second groups) …
        try FileIngestor(store: grouped.sqlite, receivedAt: .fixed(Lines.t0)).ingest(paths: files) { _, _ in }
        // … and each file in its own transaction, in the same order.
        for file in files {
            try FileIngestor(store: single.sqlite, receivedAt: .fixed(Lines.t0)).ingest(paths: [file]) { _, _ in }
        }
        for temporary in [grouped, single] { try temporary.sqlite.settleCauses() }
        let expected = try single.sqlite.summaryRows()
        #expect(expected.count > 300)
        #expect(try grouped.sqlite.summaryRows() == expected)
    }

    @Test("durability full commits with synchronous FULL, normal with NORMAL, on the writer that commits")
    func durability() throws {
        let temporary = try TemporaryStore()
        for (durability, expected) in [(SQLiteStore.Durability.full, 2), (.normal, 1)] {
            let store = try SQLiteStore(path: temporary.directory.path + "/\(durability).sqlite", durability: durability)
            #expect(try store.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == expected)
            try store.close()
        }
    }

    @Test("a disk that fills up mid-bundle undoes that bundle, keeps what was committed, and is said in plain words")
    func diskFull() throws {
        let temporary = try TemporaryStore()
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-0"))
        let before = try temporary.counts()
        // The writer may not grow the file past the pages it has: SQLite then fails as it does on a full disk.
        try temporary.sqlite.pool.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        let bundle = [Lines.manifest()] + (1...500).flatMap { Lines.serviceSteps("n-\($0)") }
        let error = try #require(throws: DatabaseError.self) { try temporary.ingest(bundle) }
        #expect(error.resultCode == .SQLITE_FULL)
        let explained = StoreError.explaining(error, path: temporary.path)
        #expect(explained as? StoreError == .diskFull(temporary.path))
        #expect("\(explained)".hasPrefix("the disk is full (\(temporary.path)'s, or that of SQLite's temporary directory"))
        #expect("\(explained)".hasSuffix("the transaction that needed the room was undone; what was committed before it stays"))
        #expect(try temporary.counts() == before)
    }

    @Test("a bad line is rejected alone, kept raw with its reason, and the rest is stored")
    func badLineAlone() throws {
        let temporary = try TemporaryStore()
        let bad = #"{"type":"event","ts":1763622001,"process":"service","event":"service.received","notification_id":"n-1"}"#
        let result = try temporary.ingest([Lines.manifest(), bad] + Lines.serviceSteps("n-1"))
        #expect(result.accepted == 3 && result.rejected == 1)
        #expect(result.rejections.first?.line == 2)
        let (reason, raw) = try temporary.sqlite.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT reason, raw FROM rejected_line"))
            return (row["reason"] as String, row["raw"] as Data)
        }
        #expect(reason.contains("looks like seconds"))
        #expect(String(decoding: raw, as: UTF8.self) == bad)
    }

    @Test("not a database, another program's database, a folder, a missing folder, a newer pushtrace's file: refused clearly")
    func refusedDatabaseFiles() throws {
        let temporary = try TemporaryStore()
        let folder = temporary.directory.path
        let text = folder + "/bundle.ndjson"
        try Data("{\"type\":\"manifest\"}\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: StoreError.notADatabase(text)) { try SQLiteStore(path: text) }
        #expect(throws: StoreError.notADatabase(text)) { try SQLiteStore.openReadOnly(path: text) }
        #expect(throws: StoreError.cannotOpen(folder, reason: "it is a folder")) { try SQLiteStore(path: folder) }
        let nowhere = folder + "/missing/p.sqlite"
        #expect(throws: StoreError.cannotOpen(nowhere, reason: "the folder \(folder)/missing does not exist")) {
            try SQLiteStore(path: nowhere)
        }

        let other = folder + "/other.sqlite"
        try DatabaseQueue(path: other).write { try $0.execute(sql: "CREATE TABLE photo (id INTEGER PRIMARY KEY)") }
        #expect(throws: StoreError.otherDatabase(other, tables: ["photo"])) { try SQLiteStore(path: other) }
        #expect(try DatabaseQueue(path: other).read { try $0.tableExists("bundle") } == false)

        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        try temporary.sqlite.pool.write { try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99-from-the-future')") }
        let before = try temporary.counts()
        #expect(throws: StoreError.newerSchema(temporary.path, migrations: ["v99-from-the-future"])) {
            try SQLiteStore(path: temporary.path)
        }
        #expect(try temporary.counts() == before)
    }

    @Test("a database another process keeps locked past the busy timeout is refused as locked, not as an SQLite code")
    func lockedDatabase() throws {
        let temporary = try TemporaryStore()
        let path = temporary.directory.path + "/locked.sqlite"
        try SQLiteStore(path: path).close()  // Closed, the log is empty: opening it again writes, so it needs the lock.
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: path, configuration: configuration)
        try holder.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        defer { try? holder.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") } }
        #expect(throws: StoreError.locked(path)) { try SQLiteStore(path: path, busyTimeout: 0.2) }
    }
}
