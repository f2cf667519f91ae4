import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// The delivery report of one app for `period` against the period before it, from the rollups, in one snapshot.
    public func report(appID: String, period: ReportPeriod) throws -> DeliveryReport {
        let previous = period.previous
        let input = try reading { session in
            let audiences = try audiences(session, appID: appID, periods: [period, previous])
            return ReportInput(
                appID: appID, period: period, previousPeriod: previous,
                rows: try Self.dailyRows(session, appID: appID, period: period),
                previousRows: try Self.dailyRows(session, appID: appID, period: previous),
                durations: try Self.durations(session, appID: appID, period: period),
                previousDurations: try Self.durations(session, appID: appID, period: previous),
                actions: try session.query(
                    """
                    SELECT action, response, sum(n)::bigint FROM daily_action
                    WHERE app_id = \(appID) AND day >= \(period.days.lowerBound) AND day < \(period.days.upperBound)
                    GROUP BY action, response HAVING sum(n) > 0
                    """
                ).map { row in
                    let (action, response, count) = try row.decode((String, String, Int64).self)
                    return ActionCount(action: action, response: response, count: Int(count))
                },
                examples: try Self.causeExamples(session, appID: appID, period: period),
                audience: audiences[0], previousAudience: audiences[1])
        }
        return DeliveryReport(input)
    }

    private func audiences(_ session: PostgresSession, appID: String, periods: [ReportPeriod]) throws -> [AudienceFigures] {
        try AudienceReading.audiences(session, appID: appID, periods: periods) { [dictionaries] in
            dictionaries.lookup($0, session)
        }
    }

    private static func dailyRows(_ session: PostgresSession, appID: String, period: ReportPeriod) throws -> [DailyCounts] {
        try session.query(
            """
            SELECT \(unescaped: RollupReading.dailyColumns)
            FROM daily WHERE app_id = \(appID) AND day >= \(period.days.lowerBound) AND day < \(period.days.upperBound)
                AND notifications > 0
            """
        ).map { row in
            let c = row.makeRandomAccess()
            return RollupReading.dailyCounts(
                day: try c[0].decode(Int64.self), category: try c[1].decode(String.self),
                appVersion: try c[2].decode(String.self), os: try c[3].decode(String.self),
                cause: try c[4].decode(String.self), attachmentFailure: try c[5].decode(String.self),
                measures: try (6..<24).map { Int(try c[$0].decode(Int64.self)) })
        }
    }

    private static func durations(_ session: PostgresSession, appID: String, period: ReportPeriod) throws -> [(ms: Int64, count: Int)] {
        try session.query(
            """
            SELECT ms, sum(n)::bigint FROM daily_duration
            WHERE app_id = \(appID) AND day >= \(period.days.lowerBound) AND day < \(period.days.upperBound)
            GROUP BY ms HAVING sum(n) > 0
            """
        ).map { row in
            let (ms, count) = try row.decode((Int64, Int64).self)
            return (ms, Int(count))
        }
    }

    /// One notification per cause in the period: the latest one each rollup row saw, checked against the summary
    /// (a notification can have been settled on another cause since).
    private static func causeExamples(_ session: PostgresSession, appID: String, period: ReportPeriod) throws -> [String: String] {
        var examples: [String: String] = [:]
        for row in try session.query(
            """
            SELECT d.cause, d.example_id FROM daily d
            WHERE d.app_id = \(appID) AND d.day >= \(period.days.lowerBound) AND d.day < \(period.days.upperBound)
                AND d.notifications > 0 AND EXISTS (
                    SELECT 1 FROM notification n WHERE n.app_id = d.app_id AND n.notification_id = d.example_id
                    AND n.cause = d.cause AND n.first_ts >= \(period.start) AND n.first_ts < \(period.end))
            ORDER BY d.day DESC, d.category DESC, d.app_version DESC, d.os DESC, d.attachment_failure DESC
            """)
        {
            let (cause, id) = try row.decode((String, String).self)
            if examples[cause] == nil { examples[cause] = id }
        }
        return examples
    }

    public func alerts(_ rules: [AlertRule], now: Int64, appID: String?) throws -> AlertReport {
        try RollupReading.alerts(rules, now: now, appID: appID, samples: alertSamples, audience: audienceSamples)
    }

    /// The `notifications_disabled` metric's samples per app (``AudienceReading/alertSamples(_:apps:spans:dictionaries:)``),
    /// in one snapshot.
    public func audienceSamples(_ spans: AlertSpans, appID: String?) throws -> [AlertSample] {
        try reading { session in
            try AudienceReading.alertSamples(session, apps: appID.map { [$0] } ?? Self.appIDs(session), spans: spans) {
                [dictionaries] in dictionaries.lookup($0, session)
            }
        }
    }

    public func audiences(period: ReportPeriod) throws -> [String: AudienceFigures] {
        try reading { session in
            try AudienceReading.figures(session, apps: Self.appIDs(session), period: period) { [dictionaries] in
                dictionaries.lookup($0, session)
            }
        }
    }

    /// Counts per app and category over settled notifications (``RollupReading/alertSamples(_:hourly:minutely:settled:)``),
    /// in one snapshot.
    public func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] {
        try reading { session in
            func sums(_ table: String, _ column: String, _ range: Range<Int64>) throws -> [RollupReading.RateRow] {
                try session.query(
                    """
                    SELECT app_id, category, \(unescaped: RollupReading.alertSums.replacingOccurrences(of: ")", with: ")::bigint"))
                    FROM \(unescaped: table) WHERE \(unescaped: column) >= \(range.lowerBound) AND \(unescaped: column) < \(range.upperBound)
                    GROUP BY app_id, category
                    """
                ).map { row in
                    let c = row.makeRandomAccess()
                    return (
                        try c[0].decode(String.self), try c[1].decode(String.self), try (2..<8).map { Int(try c[$0].decode(Int64.self)) }
                    )
                }
            }
            let apps = try Self.appIDs(session)
            return try RollupReading.alertSamples(
                spans,
                hourly: { try sums("hourly", "hour", $0) },
                minutely: { try sums("minutely", "minute", $0) },
                settled: { start, end in
                    // By app, so `notification_by_time` (app, time) is searched once per app rather than read whole.
                    try session.sqlRows(
                        """
                        SELECT app_id, \(unescaped: NotificationFacts.storedColumnList) FROM notification
                        WHERE app_id = ANY(\(apps)::text[]) AND first_ts >= \(start) AND first_ts < \(end) AND cause IS NOT NULL
                        """
                    ).map { row in (try row.decode("app_id"), try NotificationFacts(stored: row)) }
                })
        }
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
