import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The delivery report of one app for `period` against the period before it, read from the rollups (a few
    /// thousand rows whatever the number of notifications). Only settled notifications count.
    public func report(appID: String, period: ReportPeriod) throws -> DeliveryReport {
        DeliveryReport(
            try pool.read { db in
                try ReportReading.input(SQLiteSession(db: db), appID: appID, period: period) { [dictionaries] in
                    dictionaries.lookup($0, in: db)
                }
            })
    }

    /// The apps that have notifications, in order.
    public func appIDs() throws -> [String] {
        try pool.read { try AppRows.all(SQLiteSession(db: $0)) }
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
}
