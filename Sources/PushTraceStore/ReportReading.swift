import PushTraceCore

/// What the weekly delivery report reads (``ReportInput``), read the same in every engine from the rollups: a few
/// thousand rows whatever the number of notifications, in the snapshot the engine opened.
package enum ReportReading {
    /// One app's report input for `period` and the period before it. `dictionaries` finds a block dictionary by its
    /// Adler-32 (the audience reads config bodies compressed against one).
    package static func input(
        _ session: some SQLSession, appID: String, period: ReportPeriod, dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> ReportInput {
        let previous = period.previous
        let audiences = try await AudienceReading.audiences(
            session, appID: appID, periods: [period, previous], dictionaries: dictionaries)
        return ReportInput(
            appID: appID, period: period, previousPeriod: previous,
            rows: try await dailyRows(session, appID: appID, period: period),
            previousRows: try await dailyRows(session, appID: appID, period: previous),
            durations: try await durations(session, appID: appID, period: period),
            previousDurations: try await durations(session, appID: appID, period: previous),
            actions: try await session.rows(
                """
                SELECT action, response, CAST(sum(n) AS bigint) AS n FROM daily_action
                WHERE app_id = \(appID) AND day >= \(period.days.lowerBound) AND day < \(period.days.upperBound)
                GROUP BY action, response HAVING sum(n) > 0
                """
            ).map { ActionCount(action: try $0.decode("action"), response: try $0.decode("response"), count: try $0.decode("n")) },
            examples: try await causeExamples(session, appID: appID, period: period),
            audience: audiences[0], previousAudience: audiences[1])
    }

    private static func dailyRows(_ session: some SQLSession, appID: String, period: ReportPeriod) async throws -> [DailyCounts] {
        try await session.rows(
            """
            SELECT \(unsafeRaw: RollupReading.dailyColumns)
            FROM daily WHERE app_id = \(appID) AND day >= \(period.days.lowerBound) AND day < \(period.days.upperBound)
                AND notifications > 0
            """
        ).map { row in
            RollupReading.dailyCounts(
                day: try row.decode("day"), category: try row.decode("category"), appVersion: try row.decode("app_version"),
                os: try row.decode("os"), cause: try row.decode("cause"),
                attachmentFailure: try row.decode("attachment_failure"),
                measures: try Rollup.daily.measures.map { try clamped(row, $0) })
        }
    }

    /// A rollup count as an `Int`: a sum SQLite kept as a float once it passed 2^63 (a stored `download_bytes` from
    /// before sums were kept within 64 bits) is clamped.
    private static func clamped(_ row: SQLRow, _ column: String) throws -> Int {
        switch try row.decode(column, as: SQLValue.self) {
        case .real(let value): return value >= Double(Int.max) ? .max : value <= Double(Int.min) ? .min : Int(value)
        default: return try row.decode(column)
        }
    }

    private static func durations(_ session: some SQLSession, appID: String, period: ReportPeriod) async throws -> [(ms: Int64, count: Int)]
    {
        try await session.rows(
            """
            SELECT ms, CAST(sum(n) AS bigint) AS n FROM daily_duration
            WHERE app_id = \(appID) AND day >= \(period.days.lowerBound) AND day < \(period.days.upperBound)
            GROUP BY ms HAVING sum(n) > 0
            """
        ).map { (try $0.decode("ms"), try $0.decode("n")) }
    }

    /// One notification per cause in the period: the latest one each rollup row saw, checked against the summary
    /// (a notification can have been settled on another cause since).
    private static func causeExamples(_ session: some SQLSession, appID: String, period: ReportPeriod) async throws -> [String: String] {
        var examples: [String: String] = [:]
        for row in try await session.rows(
            """
            SELECT d.cause AS cause, d.example_id AS example_id FROM daily d
            WHERE d.app_id = \(appID) AND d.day >= \(period.days.lowerBound) AND d.day < \(period.days.upperBound)
                AND d.notifications > 0 AND EXISTS (
                    SELECT 1 FROM notification n WHERE n.app_id = d.app_id AND n.notification_id = d.example_id
                    AND n.cause = d.cause AND n.first_ts >= \(period.start) AND n.first_ts < \(period.end))
            ORDER BY d.day DESC, d.category DESC, d.app_version DESC, d.os DESC, d.attachment_failure DESC
            """)
        {
            let cause: String = try row.decode("cause")
            if examples[cause] == nil { examples[cause] = try row.decode("example_id") }
        }
        return examples
    }
}
