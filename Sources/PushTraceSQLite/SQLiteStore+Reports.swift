import GRDB
import PushTraceStore
import PushTraceCore

extension SQLiteStore {
    /// The delivery report of one app for `period` against the period before it, read from the rollups (a few
    /// thousand rows whatever the number of notifications). Only settled notifications count.
    public func report(appID: String, period: ReportPeriod) throws -> DeliveryReport {
        let previous = period.previous
        let input = try pool.read { db in
            ReportInput(
                appID: appID, period: period, previousPeriod: previous,
                rows: try Self.dailyRows(db, appID: appID, period: period),
                previousRows: try Self.dailyRows(db, appID: appID, period: previous),
                durations: try Self.durations(db, appID: appID, period: period),
                previousDurations: try Self.durations(db, appID: appID, period: previous),
                actions: try Row.fetchAll(db, sql: """
                    SELECT action, response, sum(n) FROM daily_action WHERE app_id = ? AND day >= ? AND day < ?
                    GROUP BY action, response HAVING sum(n) > 0
                    """, arguments: [appID, period.days.lowerBound, period.days.upperBound])
                    .map { ActionCount(action: $0[0], response: $0[1], count: $0[2]) },
                examples: try Self.causeExamples(db, appID: appID, period: period))
        }
        return DeliveryReport(input)
    }

    /// The apps that have notifications, in order.
    public func appIDs() throws -> [String] {
        try pool.read { db in try appIDs(db) }
    }

    /// The apps, found by skipping through the summary's primary key, not by scanning it.
    func appIDs(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: """
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
            let rows = try Row.fetchCursor(db, sql: """
                SELECT app_id, notification_id, \(NotificationFacts.columns) FROM notification WHERE cause IS NOT NULL
                """)
            while let row = try rows.next() {
                let app: String = row[0], id: String = row[1]
                let facts = NotificationFacts(stored: row, at: 2)
                deltas.add(appID: app, notificationID: id, facts: facts, cause: row[26],
                           sign: 1)
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
        try Row.fetchAll(db, sql: """
            SELECT day, category, app_version, os, cause, attachment_failure, notifications, sent, apns_accepted,
                device_reached, service_ran, service_delivered, service_timeouts, service_crashed, content_crashed,
                expanded, acted, downloads, download_bytes, attachment_failed, size_under_100k, size_under_1m,
                size_under_10m, size_over_10m
            FROM daily WHERE app_id = ? AND day >= ? AND day < ? AND notifications > 0
            """, arguments: [appID, period.days.lowerBound, period.days.upperBound]).map { row in
            var counts = DeliveryCounts()
            counts.notifications = row[6]
            counts.sent = row[7]
            counts.apnsAccepted = row[8]
            counts.deviceReached = row[9]
            counts.serviceRan = row[10]
            counts.serviceDelivered = row[11]
            counts.serviceTimeouts = row[12]
            counts.serviceCrashed = row[13]
            counts.contentCrashed = row[14]
            counts.expanded = row[15]
            counts.acted = row[16]
            counts.downloads = row[17]
            counts.downloadBytes = Self.clampedSum(row[18])
            counts.attachmentFailed = row[19]
            counts.sizeBands = [row[20], row[21], row[22], row[23]]
            return DailyCounts(day: row[0], category: row[1], appVersion: row[2], os: row[3], cause: row[4],
                               attachmentFailure: row[5], counts: counts)
        }
    }

    private static func durations(_ db: Database, appID: String, period: ReportPeriod) throws -> [(ms: Int64, count: Int)] {
        try Row.fetchAll(db, sql: """
            SELECT ms, sum(n) FROM daily_duration WHERE app_id = ? AND day >= ? AND day < ? GROUP BY ms HAVING sum(n) > 0
            """, arguments: [appID, period.days.lowerBound, period.days.upperBound]).map { ($0[0], $0[1]) }
    }

    /// One notification per cause in the period: the latest one each rollup row saw, checked against the summary
    /// (a notification can have been settled on another cause since).
    private static func causeExamples(_ db: Database, appID: String, period: ReportPeriod) throws -> [String: String] {
        let candidates = try Row.fetchAll(db, sql: """
            SELECT cause, example_id FROM daily WHERE app_id = ? AND day >= ? AND day < ? AND notifications > 0
            ORDER BY day DESC
            """, arguments: [appID, period.days.lowerBound, period.days.upperBound])
        let check = try db.cachedStatement(sql: """
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
