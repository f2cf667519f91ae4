import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// Recomputes every rollup from the settled summaries, by the same `Rollup.contributions` settling adds, in one
    /// transaction that locks the rollups against concurrent settling.
    public func rebuildRollups() throws {
        try withSession { pooled in
            var session = pooled
            session.deadline = nil  // maintenance: as long as the scan of every settled summary takes
            try session.transaction {
                try session.query("LOCK TABLE daily, hourly, minutely, daily_duration, daily_action IN EXCLUSIVE MODE")
                let deltas = RollupDeltas()
                for row in try session.sqlRows(
                    """
                    SELECT app_id, notification_id, cause, \(unescaped: NotificationFacts.storedColumnList) FROM notification
                    WHERE cause IS NOT NULL ORDER BY app_id, device_id NULLS FIRST, notification_id
                    """)
                {
                    deltas.add(
                        appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"),
                        facts: try NotificationFacts(stored: row), cause: try row.decode("cause"), sign: 1)
                }
                for rollup in Rollup.all { try session.query(PostgresQuery(unsafeSQL: "DELETE FROM \(rollup.table)")) }
                try deltas.write(to: session)
            }
        }
    }
}
