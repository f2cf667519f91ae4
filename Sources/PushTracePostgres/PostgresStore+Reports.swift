import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// The delivery report of one app for `period` against the period before it, from the rollups, in one snapshot.
    public func report(appID: String, period: ReportPeriod) throws -> DeliveryReport {
        DeliveryReport(
            try reading { session in
                try ReportReading.input(session, appID: appID, period: period) { [dictionaries] in dictionaries.lookup($0, session) }
            })
    }

    public func alerts(_ rules: [AlertRule], now: Int64, appID: String?) throws -> AlertReport {
        try RollupReading.alerts(rules, now: now, appID: appID, samples: alertSamples, audience: audienceSamples)
    }

    /// The `notifications_disabled` metric's samples per app (``AudienceReading/alertSamples(_:apps:spans:dictionaries:)``),
    /// in one snapshot.
    public func audienceSamples(_ spans: AlertSpans, appID: String?) throws -> [AlertSample] {
        try reading { session in
            try AudienceReading.alertSamples(session, apps: appID.map { [$0] } ?? AppRows.all(session), spans: spans) {
                [dictionaries] in dictionaries.lookup($0, session)
            }
        }
    }

    public func audiences(period: ReportPeriod) throws -> [String: AudienceFigures] {
        try reading { session in
            try AudienceReading.figures(session, apps: AppRows.all(session), period: period) { [dictionaries] in
                dictionaries.lookup($0, session)
            }
        }
    }

    /// Counts per app and category over settled notifications (``RollupReading/alertSamples(_:hourly:minutely:settled:)``),
    /// in one snapshot.
    public func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] {
        try reading { try RollupReading.alertSamples(spans, $0) }
    }

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
