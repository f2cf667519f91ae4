import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The apps that have records for a notification ID (normally one).
    public func apps(forNotification id: String) throws -> [String] {
        try pool.read { try AppRows.storing(notification: NotificationKey.normalize(id), SQLiteSession(db: $0)) }
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

    public func search(_ query: SearchQuery) throws -> [NotificationSummary] {
        try pool.read { db in try SQLiteSession(db: db).search(query) }
    }

    public func causeCounts(since: Int64) throws -> [CauseCount] {
        try pool.read { db in try SQLiteSession(db: db).causeCounts(since: since) }
    }
}
