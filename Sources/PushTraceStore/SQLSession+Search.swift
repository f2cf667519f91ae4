import PushTraceCore

extension SearchQuery {
    /// The statement that answers the query from the summaries: newest first, a summary without a first time
    /// after every timed one, ties by notification ID byte by byte.
    package func statement(for dialect: some SQLDialect) -> SQLStatement {
        var conditions: [SQLStatement] = []
        if let appID { conditions.append("app_id = \(appID)") }
        if let cause {
            conditions.append("cause = \(cause.rawValue)")
            // Said again in the words of the index of the other causes' rows, so that a planner matches it.
            if !Self.shownCauses.contains(cause) { conditions.append("cause NOT IN ('not_expanded', 'ok')") }
        }
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

extension SearchQuery {
    /// The causes a card that showed is settled with: most rows have one, so any stretch of time holds many and
    /// the time index finds them. Every other cause is in index `notification_by_cause` (docs/schema.md).
    static let shownCauses: Set<Cause> = [.notExpanded, .ok]
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
    ///
    /// Each app's summaries are read newest first through its time index (`app_id, first_ts`); a search across
    /// apps reads each app's first rows that way and merges them, rather than sorting every summary.
    package func search(_ query: SearchQuery) async throws -> [NotificationSummary] {
        guard query.appID == nil else { return try await searchApp(query) }
        let apps = try await AppRows.all(self)
        // Past a few dozen apps, one sort of the matching summaries costs less than a walk per app.
        guard apps.count <= 32 else { return try await rows(query.statement(for: dialect)).map(NotificationSummary.init(row:)) }
        var merged: [NotificationSummary] = []
        for app in apps {
            var one = query
            one.appID = app
            one.limit = query.offset + query.limit
            one.offset = 0
            merged += try await searchApp(one)
        }
        merged.sort { a, b in
            switch (a.firstTs, b.firstTs) {
            case (let x?, let y?) where x != y: return x > y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return Array(a.notificationID.utf8).lexicographicallyPrecedes(Array(b.notificationID.utf8))
            }
        }
        return Array(merged.dropFirst(query.offset).prefix(query.limit))
    }

    /// One app's search. A search by a cause a shown card is settled with reads only the hours that hold its rows:
    /// the hourly rollup counts the app's settled notifications by the hour of their first record and their cause,
    /// so the newest of those hours that together hold `offset + limit` rows are read, each through the time index.
    /// Any other cause has an index of its own. (Every summary has a first time: a record without `ts` is never
    /// stored.)
    private func searchApp(_ query: SearchQuery) async throws -> [NotificationSummary] {
        guard let app = query.appID, let cause = query.cause, SearchQuery.shownCauses.contains(cause), query.deviceID == nil
        else {
            return try await rows(query.statement(for: dialect)).map(NotificationSummary.init(row:))
        }
        let hourMs: Int64 = 3_600_000
        var conditions: [SQLStatement] = ["app_id = \(app)", "cause = \(cause.rawValue)"]
        if let category = query.category { conditions.append("category = \(category)") }
        if let since = query.since { conditions.append("hour >= \(since / hourMs)") }
        if let until = query.until { conditions.append("hour <= \(until / hourMs)") }
        let needed = query.offset + query.limit
        // The spans to read, newest first: runs of hours with rows.
        var spans: [(start: Int64, end: Int64)] = []
        var counted = 0
        for row in try await rows(
            """
            SELECT hour, CAST(sum(notifications) AS bigint) AS n FROM hourly
            WHERE \(SQLStatement.joined(conditions, separator: " AND ")) GROUP BY hour ORDER BY hour DESC
            """)
        {
            let hour: Int64 = try row.decode("hour"), count: Int = try row.decode("n")
            if let last = spans.last, last.start == (hour + 1) * hourMs {
                spans[spans.count - 1].start = hour * hourMs
            } else {
                spans.append((hour * hourMs, (hour + 1) * hourMs))
            }
            counted += count
            if counted >= needed { break }
        }
        var found: [NotificationSummary] = []
        for span in spans where found.count < needed {
            var part = query
            part.since = max(query.since ?? .min, span.start)
            part.until = min(query.until ?? .max, span.end)
            part.offset = 0
            part.limit = needed - found.count
            found += try await rows(part.statement(for: dialect)).map(NotificationSummary.init(row:))
        }
        return Array(found.dropFirst(query.offset).prefix(query.limit))
    }

    /// Settled notifications first seen in the hour of `since` or later, counted by app, category and primary
    /// cause, from the hourly rollup (``TraceStore/causeCounts(since:)``).
    package func causeCounts(since: Int64) async throws -> [CauseCount] {
        try await rows(
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
