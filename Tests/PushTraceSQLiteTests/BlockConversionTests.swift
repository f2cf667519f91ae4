import Foundation
import GRDB
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

/// The conversion of a store with a row per record (the previous release's) into record blocks.
@Suite("SQLiteStore: converting per-record rows into blocks")
struct BlockConversionTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../PushTraceCLITests/Fixtures/blocks-conversion").standardized

    @Test("a conversion stopped after some transactions (as by a kill) is finished by the next open; answers equal a conversion in one go")
    func resumesAfterStop() async throws {
        let temporary = try TemporaryStore()
        let whole = temporary.directory.appendingPathComponent("whole.sqlite").path
        let stopped = temporary.directory.appendingPathComponent("stopped.sqlite").path
        for path in [whole, stopped] {
            try FileManager.default.copyItem(atPath: Self.fixture.appendingPathComponent("store.sqlite").path, toPath: path)
        }
        let records = try await DatabaseQueue(path: whole).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM record") } ?? 0
        #expect(records > 1_000)

        // Three small transactions, then stop.
        let pool = try DatabasePool(path: stopped)
        try Schema.migrator.migrate(pool)
        var told: [ConversionProgress] = []
        try SQLiteStore.convertRecordsToBlocks(pool, recordsPerTransaction: 300) { progress in
            told.append(progress)
            return told.count < 4
        }
        let (left, inBlocks) = try await pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM record") ?? 0,
                try Int.fetchOne(db, sql: "SELECT sum(lines) FROM record_block") ?? 0
            )
        }
        #expect(told.first?.bundles == 0 && told.last!.bundles > 0 && told.last!.totalBundles > told.last!.bundles)
        #expect(left > 0 && inBlocks == told.last!.records && left + inBlocks == records)
        try pool.close()

        var progress: [ConversionProgress] = []
        let resumed = try SQLiteStore(path: stopped) { progress.append($0) }
        #expect(progress.first?.totalBundles == told.last!.totalBundles - told.last!.bundles)
        #expect(progress.last?.bundles == progress.last?.totalBundles && progress.last!.records == left)
        let once = try SQLiteStore(path: whole)
        for store in [resumed, once] {
            try await store.pool.read { db throws in
                #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'record'") == 0)
                #expect(try Int.fetchOne(db, sql: "SELECT sum(lines) FROM record_block") == records)
                #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM bundle WHERE first_record IS NOT NULL") == 0)
            }
        }
        let notifications = try once.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT app_id, notification_id FROM notification ORDER BY 1, 2")
        }
        #expect(notifications.count > 100)
        for row in notifications {
            let app: String = row[0], id: String = row[1]
            let (why, whyOnce) = (try await resumed.why(appID: app, notificationID: id), try await once.why(appID: app, notificationID: id))
            #expect(why.jsonValue == whyOnce.jsonValue)
            let (logs, logsOnce) = (
                try await resumed.logs(appID: app, notificationID: id), try await once.logs(appID: app, notificationID: id)
            )
            #expect(logs.map(\.json) == logsOnce.map(\.json))
        }
        var exported: [[String]] = []
        for store in [resumed, once] {
            var lines: [String] = []
            try store.export(ExportFilter()) { lines.append($0.body) }
            exported.append(lines)
        }
        #expect(exported[0] == exported[1] && exported[0].count == records)
    }
}
