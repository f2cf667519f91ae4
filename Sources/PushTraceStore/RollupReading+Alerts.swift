import PushTraceCore

extension RollupReading {
    /// ``alertSamples(_:hourly:minutely:settled:)`` read from `session`'s rollups and summaries, the same SQL on
    /// every engine.
    package static func alertSamples(_ spans: AlertSpans, _ session: some SQLSession) async throws -> [AlertSample] {
        // Cast: PostgreSQL sums `bigint` columns as `numeric`.
        let sums = alertColumns.map { "CAST(sum(\($0)) AS BIGINT) AS \($0)" }.joined(separator: ", ")
        func rates(_ table: String, _ column: String, _ range: Range<Int64>) async throws -> [RateRow] {
            try await session.rows(
                """
                SELECT app_id, category, \(unsafeRaw: sums) FROM \(unsafeRaw: table)
                WHERE \(unsafeRaw: column) >= \(range.lowerBound) AND \(unsafeRaw: column) < \(range.upperBound)
                GROUP BY app_id, category
                """
            ).map { row in
                (try row.decode("app_id"), try row.decode("category"), try alertColumns.map { try row.decode($0) })
            }
        }
        let apps = try await AppRows.all(session)
        let byTime = session.dialect.indexedBy("notification_by_time")
        return try await alertSamples(
            spans,
            hourly: { try await rates("hourly", "hour", $0) },
            minutely: { try await rates("minutely", "minute", $0) },
            settled: { start, end in
                // By app, so `notification_by_time` (app, time) is searched once per app rather than read whole.
                var settled: [(appID: String, facts: NotificationFacts)] = []
                for app in apps {
                    for row in try await session.rows(
                        """
                        SELECT \(unsafeRaw: NotificationFacts.storedColumnList) FROM notification\(unsafeRaw: byTime)
                        WHERE app_id = \(app) AND first_ts >= \(start) AND first_ts < \(end) AND cause IS NOT NULL
                        """)
                    {
                        settled.append((app, try NotificationFacts(stored: row)))
                    }
                }
                return settled
            })
    }
}
