import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The apps that have records for a notification ID (normally one).
    public func apps(forNotification id: String) throws -> [String] {
        let key = NotificationKey.normalize(id)
        return try pool.read { db in
            try String.fetchAll(
                db, sql: "SELECT app_id FROM notification WHERE notification_id = ? ORDER BY app_id",
                arguments: [key])
        }
    }

    /// The answer to `why` for one notification of one app (an `unknown_notification` answer when nothing is stored).
    public func why(appID: String, notificationID: String) throws -> WhyReport {
        let key = NotificationKey.normalize(notificationID)
        let input = try pool.read { db in try DiagnosisReader(db, dictionaries: dictionaries).input(appID: appID, notificationID: key) }
        return WhyReport(input: input, diagnosis: Diagnoser(settings: settings).diagnose(input))
    }

    /// The `log` records of one notification from every process, in time order.
    public func logs(appID: String, notificationID: String) throws -> [TimelineEntry] {
        let key = NotificationKey.normalize(notificationID)
        return try pool.read { db in
            try DiagnosisReader(db, dictionaries: dictionaries).entries(appID: appID, notificationID: key, type: "log")
        }
    }

    /// Notifications matching `query`, newest first, from the per-notification summaries.
    public func search(_ query: SearchQuery) throws -> [NotificationSummary] {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let app = query.appID {
            conditions.append("app_id = ?")
            arguments.append(app)
        }
        if let cause = query.cause {
            conditions.append("cause = ?")
            arguments.append(cause.rawValue)
        }
        if let category = query.category {
            conditions.append("category = ?")
            arguments.append(category)
        }
        if let device = query.deviceID {
            conditions.append("device_id = ?")
            arguments.append(device)
        }
        if let since = query.since {
            conditions.append("first_ts >= ?")
            arguments.append(since)
        }
        if let until = query.until {
            conditions.append("first_ts < ?")
            arguments.append(until)
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments.append(query.limit)
        return try pool.read { db in
            try NotificationSummary.fetchAll(
                db,
                sql: """
                    SELECT * FROM notification \(whereClause) ORDER BY first_ts DESC, notification_id LIMIT ?
                    """, arguments: StatementArguments(arguments))
        }
    }
}

extension SQLiteStore {
    /// Settled notifications first seen in the hour of `since` or later, counted by app, category and primary
    /// cause, from the hourly rollup.
    public func causeCounts(since: Int64) throws -> [CauseCount] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT app_id, category, cause, sum(notifications) FROM hourly WHERE hour >= ?
                    GROUP BY app_id, category, cause HAVING sum(notifications) > 0
                    """, arguments: [since / 3_600_000]
            ).map { row in
                let category: String = row[1]
                return CauseCount(appID: row[0], category: category.isEmpty ? nil : category, cause: row[2], count: row[3])
            }
        }
    }
}
extension NotificationSummary: FetchableRecord {}
