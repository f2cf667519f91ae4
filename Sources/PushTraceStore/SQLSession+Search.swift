import PushTraceCore

extension SearchQuery {
    /// The statement that answers the query from the summaries: newest first, a summary without a first time
    /// after every timed one, ties by notification ID byte by byte.
    package func statement(for dialect: some SQLDialect) -> SQLStatement {
        var conditions: [SQLStatement] = []
        if let appID { conditions.append("app_id = \(appID)") }
        if let cause { conditions.append("cause = \(cause.rawValue)") }
        if let category { conditions.append("category = \(category)") }
        if let deviceID { conditions.append("device_id = \(deviceID)") }
        if let since { conditions.append("first_ts >= \(since)") }
        if let until { conditions.append("first_ts < \(until)") }
        let paging: SQLStatement = offset > 0 ? "OFFSET \(offset)" : ""
        let filter: SQLStatement = conditions.isEmpty ? "" : "WHERE \(SQLStatement.joined(conditions, separator: " AND "))"
        return """
            SELECT \(unsafeRaw: NotificationSummary.columnList) FROM notification \(filter)
            ORDER BY first_ts \(unsafeRaw: dialect.descendingNullsLast), notification_id \(unsafeRaw: dialect.byteOrder) LIMIT \(limit) \(paging)
            """
    }
}

extension NotificationSummary {
    /// The `notification` columns a summary is read from.
    static let columnList = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    /// A summary read by column name.
    package init(row: SQLRow) throws {
        self.init(
            appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"),
            deviceID: try row.decode("device_id"), category: try row.decode("category"),
            appVersion: try row.decode("app_version"), os: try row.decode("os"), firstTs: try row.decode("first_ts"),
            lastTs: try row.decode("last_ts"), sentTs: try row.decode("sent_ts"), apnsStatus: try row.decode("apns_status"),
            serviceMs: try row.decode("service_ms"), actions: try row.decode("actions"), records: try row.decode("records"),
            cause: try row.decode("cause"))
    }
}

extension SQLSession {
    /// Notification summaries that match `query` (``TraceStore/search(_:)``).
    package func search(_ query: SearchQuery) throws -> [NotificationSummary] {
        try rows(query.statement(for: dialect)).map(NotificationSummary.init(row:))
    }

    /// Settled notifications first seen in the hour of `since` or later, counted by app, category and primary
    /// cause, from the hourly rollup (``TraceStore/causeCounts(since:)``).
    package func causeCounts(since: Int64) throws -> [CauseCount] {
        try rows(
            """
            SELECT app_id, category, cause, CAST(sum(notifications) AS bigint) AS count FROM hourly
            WHERE hour >= \(since / 3_600_000)
            GROUP BY app_id, category, cause HAVING sum(notifications) > 0
            """
        ).map { row in
            let category: String = try row.decode("category")
            return CauseCount(
                appID: try row.decode("app_id"), category: category.isEmpty ? nil : category, cause: try row.decode("cause"),
                count: try row.decode("count"))
        }
    }
}
