import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

@Suite("SummaryBacklog: summaries written after their bundles' commits")
struct SummaryBacklogTests {
    @Test("summaries written later from a backlog, or rebuilt after its process died, equal those written at each commit")
    func deferredEqualsDirect() throws {
        let direct = try TemporaryStore(), deferred = try TemporaryStore(), recovered = try TemporaryStore()
        let bundles = direct.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: 13, notifications: 250), into: bundles)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }

        for file in files { try Self.commit(file, into: direct.sqlite, deferringTo: nil) }

        let backlog = try #require(try deferred.sqlite.makeSummaryBacklog())
        #expect(try deferred.sqlite.makeSummaryBacklog() == nil, "one backlog per database at a time")
        for (index, file) in files.enumerated() {
            try Self.commit(file, into: deferred.sqlite, deferringTo: backlog)
            if index % 7 == 6 { try deferred.sqlite.writeSummaries(backlog) }
        }
        try deferred.sqlite.writeSummaries(backlog)
        #expect(backlog.isEmpty)
        #expect(try Self.unsummarizedBundles(deferred.sqlite) == 0)

        // A process that dies with facts in its backlog: the next to open the store writes them from the records.
        try Self.storeThenDie(files, into: recovered.sqlite)
        #expect(try Self.unsummarizedBundles(recovered.sqlite) > 0)
        try recovered.sqlite.close()
        let reopened = try SQLiteStore(path: recovered.path)
        #expect(try Self.unsummarizedBundles(reopened) == 0)

        for store in [direct.sqlite, deferred.sqlite, reopened] { try store.settleCauses() }
        let expected = try direct.sqlite.summaryRows()
        #expect(expected.count > 250)
        #expect(try deferred.sqlite.summaryRows() == expected)
        #expect(try reopened.summaryRows() == expected)
    }

    @Test("a store opened while another process's backlog lives leaves that backlog's bundles alone")
    func liveBacklogLeftAlone() throws {
        let temporary = try TemporaryStore()
        let bundles = temporary.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: 14, notifications: 20), into: bundles)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        let backlog = try #require(try temporary.sqlite.makeSummaryBacklog())
        for file in files { try Self.commit(file, into: temporary.sqlite, deferringTo: backlog) }
        let waiting = try Self.unsummarizedBundles(temporary.sqlite)
        #expect(waiting == files.count)
        // Another process opening the database (say `pushtrace token create`) must not write them a second time.
        let other = try SQLiteStore(path: temporary.path)
        #expect(try Self.unsummarizedBundles(other) == waiting)
        try temporary.sqlite.writeSummaries(backlog)
        #expect(try Self.unsummarizedBundles(other) == 0)
        let records = try other.pool.read { db in try Int.fetchOne(db, sql: "SELECT sum(records) FROM notification") }
        var stored = 0
        try other.export(ExportFilter()) { line in
            var body = line.body
            if body.withUTF8({ PushTraceRecords.Record(scanning: UnsafeRawBufferPointer($0)) })?.notificationID != nil { stored += 1 }
        }
        #expect(records == stored)
    }

    private static func commit(_ file: String, into store: SQLiteStore, deferringTo backlog: SummaryBacklog?) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let decoder = BundleDecoder(encoding: .sniff)
        _ = try store.inGroupCommit(deferringSummariesTo: backlog) { group in
            try group.ingest(source: file, receivedAt: Lines.t0) { sink in
                try bytes.withUnsafeBytes { try decoder.consume($0, sink) }
                try decoder.finish(sink)
            }
        }
    }

    /// Stores `files` with a backlog that is dropped unwritten, as a killed process's is.
    private static func storeThenDie(_ files: [String], into store: SQLiteStore) throws {
        let backlog = try #require(try store.makeSummaryBacklog())
        for file in files { try commit(file, into: store, deferringTo: backlog) }
    }

    private static func unsummarizedBundles(_ store: SQLiteStore) throws -> Int {
        try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM bundle WHERE summarized = 0")! }
    }
}

extension SQLiteStore {
    /// Every summary and rollup row, as text, sorted: two stores of the same bundles must agree on all of them.
    func summaryRows() throws -> [String] {
        try pool.read { db in
            try ["notification", "daily", "hourly", "minutely", "daily_duration", "daily_action"].flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map { "\(table) \($0)" }.sorted()
            }
        }
    }
}
