import Foundation
import GRDB
import PushTraceCore
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

@Suite("SQLiteStore: delivery reports and rollups")
struct ReportTests {
    static let app = "net.rorklab.dailypick"
    static let week = ReportPeriod(isoWeek: "2026-W46")!

    /// A seeded simulation, ingested and settled.
    static func simulatedStore(seed: UInt64 = 11, notifications: Int = 3_000) throws -> TemporaryStore {
        try TemporaryStore.simulated(seed: seed, notifications: notifications)
    }

    /// A report as JSON with sorted keys: two reports of the same figures compare equal byte for byte.
    static func reportJSON(_ store: SQLiteStore, period: ReportPeriod = week) async throws -> Data {
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        return try await sorted.encode(store.report(appID: app, period: period))
    }

    @Test("the report's figures are docs/spec.md §7's definitions, computed here from the notifications themselves")
    func definitions() async throws {
        let temporary = try Self.simulatedStore()
        let report = try await temporary.sqlite.report(appID: Self.app, period: Self.week)
        let encoded = try JSONEncoder().encode(report)
        try await temporary.sqlite.pool.read { db in
            let json = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
            let range: [any DatabaseValueConvertible] = [Self.app, Self.week.start, Self.week.end]
            let row = try #require(
                try Row.fetchOne(
                    db,
                    sql: """
                        SELECT count(*), sum(service_received), sum(service_delivered), sum(service_expired)
                        FROM notification WHERE app_id = ? AND first_ts >= ? AND first_ts < ?
                        """, arguments: StatementArguments(range)))
            let (notifications, ran, delivered, timeouts): (Int, Int, Int, Int) = (row[0], row[1], row[2], row[3])
            #expect(notifications > 300)
            #expect(json["notifications"] as? Int == notifications)
            let service = try #require(json["service"] as? [String: Any])
            #expect(service["ran"] as? Int == ran)
            #expect(service["delivered"] as? Int == delivered)
            #expect(service["timeouts"] as? Int == timeouts)
            #expect(timeouts > 0)
            #expect(service["timeout_rate"] as? Double == Double(timeouts) / Double(ran))
            // Nearest rank over the `elapsed_ms` of service.delivered / service.expired (expired wins).
            let durations = try Int64.fetchAll(
                db,
                sql: """
                    SELECT service_ms FROM notification WHERE app_id = ? AND first_ts >= ? AND first_ts < ?
                    AND service_ms IS NOT NULL ORDER BY service_ms
                    """, arguments: StatementArguments(range))
            func nearestRank(_ p: Double) -> Int64 { durations[Int((p * Double(durations.count)).rounded(.up)) - 1] }
            let percentiles = try #require(service["duration_ms"] as? [String: Any])
            #expect(percentiles["p50"] as? Int64 == nearestRank(0.5))
            #expect(percentiles["p90"] as? Int64 == nearestRank(0.9))
            #expect(percentiles["p99"] as? Int64 == nearestRank(0.99))
            let causes = Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(
                    db,
                    sql: """
                        SELECT cause, count(*) FROM notification WHERE app_id = ? AND first_ts >= ? AND first_ts < ? GROUP BY cause
                        """, arguments: StatementArguments(range)
                ).map { (row: Row) -> (String, Int) in (row[0], row[1]) })
            #expect(json["causes"] as? [String: Int] == causes)
            // Every example is a notification of that cause in the week.
            for (cause, id) in report.causeExamples {
                let stored = try Row.fetchOne(
                    db, sql: "SELECT cause, first_ts FROM notification WHERE app_id = ? AND notification_id = ?",
                    arguments: [Self.app, id])
                #expect(stored?[0] == cause)
                #expect(Self.week.start <= (stored?[1] ?? 0) && (stored?[1] ?? 0) < Self.week.end)
            }
            #expect(Set(report.causeExamples.keys) == Set(causes.keys))
        }
        let json = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        let previous = try #require(json["previous"] as? [String: Any])
        #expect((previous["period"] as? [String: Any])?["label"] as? String == "2026-W45")
        #expect(previous["notifications"] as? Int == report.previous.notifications)
        #expect(report.previous.notifications > 300)
    }

    @Test("the audience of devices and config rows stored before they kept a settings summary is read from their rows and bodies, alike")
    func audienceFromOlderRows() async throws {
        let temporary = try Self.simulatedStore()
        let period = ReportPeriod(label: "2026-10-01..2026-12-31", start: 1_790_812_800_000, end: 1_798_761_600_000)
        let summarised = try await temporary.sqlite.report(appID: Self.app, period: period).figures.audience
        #expect(summarised.withSettings > 0 && summarised.notificationsDisabled > 0, "\(summarised)")
        // Devices first: their config rows are read instead of their summary; then the rows' bodies.
        let devices = try await temporary.sqlite.pool.write { db in
            try db.execute(sql: "UPDATE device SET settings = NULL, settings_since = NULL")
            return db.changesCount
        }
        #expect(devices > 0)
        #expect(try await temporary.sqlite.report(appID: Self.app, period: period).figures.audience == summarised)
        let rows = try await temporary.sqlite.pool.write { db in
            try db.execute(sql: "UPDATE config SET settings = NULL")
            return db.changesCount
        }
        #expect(rows > 0)
        #expect(try await temporary.sqlite.report(appID: Self.app, period: period).figures.audience == summarised)
    }

    @Test("rollups kept by the triggers equal a rebuild, after bundles that unsettle settled notifications")
    func triggersMatchRebuild() throws {
        let temporary = try TemporaryStore()
        let bundles = temporary.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: 5, notifications: 800), into: bundles)
        let files = try TemporaryStore.bundleFiles(in: bundles)
        // Devices first, settled; then the backend's events change (and unsettle) most notifications.
        let ingestor = FileIngestor(store: temporary.sqlite)
        try ingestor.ingest(paths: files.filter { !$0.contains("server-") }) { _, _ in }
        try temporary.sqlite.settleCauses()
        try ingestor.ingest(paths: files.filter { $0.contains("server-") }) { _, _ in }
        try temporary.sqlite.settleCauses()
        // Each table with its count column: rows emptied by unsettling hold zeros, which a rebuild does not have.
        let tables = [
            ("daily", "notifications"), ("hourly", "notifications"), ("minutely", "notifications"),
            ("daily_duration", "n"), ("daily_action", "n"),
        ]
        func snapshot() throws -> [String: [[String]]] {
            try temporary.sqlite.pool.read { db in
                var tablesRows: [String: [[String]]] = [:]
                for (table, count) in tables {
                    var rows: [[String]] = []
                    for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) WHERE \(count) != 0 ORDER BY 1, 2, 3, 4") {
                        let columns = row.columnNames.filter { $0 != "example_id" }
                        rows.append(
                            columns.map { column -> String in
                                let value: DatabaseValue = row[column]
                                return value.description
                            })
                    }
                    tablesRows[table] = rows
                }
                return tablesRows
            }
        }
        let kept = try snapshot()
        #expect(kept["daily"]?.isEmpty == false)
        #expect(kept["daily_action"]?.isEmpty == false)
        #expect(kept["minutely"]?.isEmpty == false)
        try temporary.sqlite.rebuildRollups()
        #expect(try snapshot() == kept)
    }

    @Test("the alerts' window, from the minute rollup and the part-minutes at its ends, counts exactly the settled notifications in it")
    func alertWindowIsExact() throws {
        let temporary = try Self.simulatedStore(seed: 5, notifications: 1_500)
        let (first, last) = try temporary.sqlite.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT min(first_ts), max(first_ts) FROM notification"))
            return (row[0] as Int64, row[1] as Int64)
        }
        let middle = (first + last) / 2
        // Windows that start and end off the minute, on it, and one shorter than a minute that holds no whole one.
        let windows: [(start: Int64, end: Int64)] = [
            (middle - 36_000_123, middle + 12_345), (middle / 60_000 * 60_000 - 14_400_000, middle / 60_000 * 60_000),
            (first, last + 1), (first, first + 40_000),
        ]
        for window in windows {
            var spans = AlertSpans(rule: AlertRule(name: "window", metric: .serviceTimeout), now: window.end)
            spans.windowStart = window.start
            let counted = try temporary.sqlite.alertSamples(spans).map {
                [$0.appID, $0.category, "\($0.window.serviceRan)", "\($0.window.serviceTimeouts)", "\($0.window.extensionCrashes)"]
            }
            let expected = try temporary.sqlite.pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT app_id, coalesce(category, ''), sum(service_received), sum(service_expired),
                            sum(service_crashed OR content_crashed)
                        FROM notification WHERE first_ts >= ? AND first_ts < ? AND cause IS NOT NULL GROUP BY 1, 2
                        """, arguments: [window.start, window.end]
                ).map { row -> [String] in
                    [row[0], row[1], "\(row[2] as Int)", "\(row[3] as Int)", "\(row[4] as Int)"]
                }
            }
            #expect(!expected.isEmpty)
            // Samples also carry app-category pairs seen only in the baseline: those count zero in the window.
            let notInWindow = counted.filter { row in !expected.contains { $0.prefix(2) == row.prefix(2) } }
            #expect(counted.filter { !notInWindow.contains($0) } == expected, "window \(window.start)..<\(window.end)")
            #expect(notInWindow.allSatisfy { $0.suffix(3) == ["0", "0", "0"] })
        }
    }
}
