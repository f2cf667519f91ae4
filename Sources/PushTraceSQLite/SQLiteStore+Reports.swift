import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The delivery report of one app for `period` against the period before it, read from the rollups (a few
    /// thousand rows whatever the number of notifications). Only settled notifications count.
    public func report(appID: String, period: ReportPeriod) throws -> DeliveryReport {
        let previous = period.previous
        let input = try pool.read { db in
            let audiences = try audiences(db, appID: appID, periods: [period, previous])
            return ReportInput(
                appID: appID, period: period, previousPeriod: previous,
                rows: try Self.dailyRows(db, appID: appID, period: period),
                previousRows: try Self.dailyRows(db, appID: appID, period: previous),
                durations: try Self.durations(db, appID: appID, period: period),
                previousDurations: try Self.durations(db, appID: appID, period: previous),
                actions: try Row.fetchAll(
                    db,
                    sql: """
                        SELECT action, response, sum(n) FROM daily_action WHERE app_id = ? AND day >= ? AND day < ?
                        GROUP BY action, response HAVING sum(n) > 0
                        """, arguments: [appID, period.days.lowerBound, period.days.upperBound]
                )
                .map { ActionCount(action: $0[0], response: $0[1], count: $0[2]) },
                examples: try Self.causeExamples(db, appID: appID, period: period),
                audience: audiences[0], previousAudience: audiences[1])
        }
        return DeliveryReport(input)
    }

    private func audiences(_ db: Database, appID: String, periods: [ReportPeriod]) throws -> [AudienceFigures] {
        try AudienceReading.audiences(SQLiteSession(db: db), appID: appID, periods: periods) { [dictionaries] in
            dictionaries.lookup($0, in: db)
        }
    }

    /// The apps that have notifications, in order.
    public func appIDs() throws -> [String] {
        try pool.read { db in try appIDs(db) }
    }

    /// The apps, found by skipping through the summary's primary key, not by scanning it.
    func appIDs(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                WITH RECURSIVE app(id) AS (
                    SELECT min(app_id) FROM notification
                    UNION ALL
                    SELECT (SELECT min(app_id) FROM notification WHERE app_id > app.id) FROM app WHERE app.id IS NOT NULL
                )
                SELECT id FROM app WHERE id IS NOT NULL
                """)
    }

    /// Recomputes every rollup from the settled notifications, by the same `Rollup.contributions` that settling
    /// adds (for a store whose rollups are in doubt, and for the tests that prove the incremental counts right).
    /// Holds one delta per rollup row in memory.
    public func rebuildRollups() throws {
        try pool.write { db in
            let deltas = RollupDeltas()
            try SQLiteSession(db: db).each(
                """
                SELECT app_id, notification_id, cause, \(unsafeRaw: NotificationFacts.storedColumnList) FROM notification
                WHERE cause IS NOT NULL
                """
            ) { row in
                deltas.add(
                    appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"),
                    facts: try NotificationFacts(stored: row), cause: try row.decode("cause"), sign: 1)
            }
            for rollup in Rollup.all { try db.execute(sql: "DELETE FROM \(rollup.table)") }
            try deltas.write(db)
        }
    }

    /// A sum as the rollup holds it: SQLite turns an integer sum past 2^63 into a REAL, which would not decode as
    /// an integer; it is read as `Int.max` instead.
    static func clampedSum(_ value: DatabaseValue) -> Int {
        switch value.storage {
        case .int64(let int): return Int(int)
        case .double(let double): return double >= Double(Int.max) ? .max : double <= Double(Int.min) ? .min : Int(double)
        default: return 0
        }
    }

    private static func dailyRows(_ db: Database, appID: String, period: ReportPeriod) throws -> [DailyCounts] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(RollupReading.dailyColumns)
                FROM daily WHERE app_id = ? AND day >= ? AND day < ? AND notifications > 0
                """, arguments: [appID, period.days.lowerBound, period.days.upperBound]
        ).map { row in
            // download_bytes, a sum that may pass 2^63, is clamped.
            RollupReading.dailyCounts(
                day: row[0], category: row[1], appVersion: row[2], os: row[3], cause: row[4],
                attachmentFailure: row[5],
                measures: (6..<24).map { $0 == 18 ? Self.clampedSum(row[$0]) : row[$0] as Int })
        }
    }

    private static func durations(_ db: Database, appID: String, period: ReportPeriod) throws -> [(ms: Int64, count: Int)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT ms, sum(n) FROM daily_duration WHERE app_id = ? AND day >= ? AND day < ? GROUP BY ms HAVING sum(n) > 0
                """, arguments: [appID, period.days.lowerBound, period.days.upperBound]
        ).map { ($0[0], $0[1]) }
    }

    /// One notification per cause in the period: the latest one each rollup row saw, checked against the summary
    /// (a notification can have been settled on another cause since).
    private static func causeExamples(_ db: Database, appID: String, period: ReportPeriod) throws -> [String: String] {
        let candidates = try Row.fetchAll(
            db,
            sql: """
                SELECT cause, example_id FROM daily WHERE app_id = ? AND day >= ? AND day < ? AND notifications > 0
                ORDER BY day DESC, category DESC, app_version DESC, os DESC, attachment_failure DESC
                """, arguments: [appID, period.days.lowerBound, period.days.upperBound])
        let check = try db.cachedStatement(
            sql: """
                SELECT 1 FROM notification WHERE app_id = ? AND notification_id = ? AND cause = ? AND first_ts >= ? AND first_ts < ?
                """)
        var examples: [String: String] = [:]
        for row in candidates {
            let cause: String = row[0]
            guard examples[cause] == nil, let id: String = row[1] else { continue }
            if try Bool.fetchOne(check, arguments: [appID, id, cause, period.start, period.end]) != nil {
                examples[cause] = id
            }
        }
        return examples
    }
}
