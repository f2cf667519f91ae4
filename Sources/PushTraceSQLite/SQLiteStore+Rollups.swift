import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
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
