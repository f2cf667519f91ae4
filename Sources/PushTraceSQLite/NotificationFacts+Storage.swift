import Foundation
import GRDB
import PushTraceStore

/// A summary as the `notification` table keeps it (``NotificationFacts/storedColumns``), read by the settle lanes.
extension NotificationFacts {
    /// The stored summary of a notification and its cause, or nil when there is none. Read for every notification
    /// of every bundle: its statement and its columns are made once.
    static func read(_ db: Database, appID: String, notificationID: String) throws -> (facts: NotificationFacts, cause: String?)? {
        let statement = try db.cachedStatement(sql: readSQL)
        try statement.bind([.text(appID), .text(notificationID)])
        var found: (facts: NotificationFacts, cause: String?)?
        try statement.eachRow { values in
            let stored = SQLRow(columns: readColumns, values: values)
            found = (try NotificationFacts(stored: stored), try stored.decode("cause"))
        }
        return found
    }

    private static let readColumns = SQLColumns(storedColumns.map(\.name) + ["cause"])
    private static let readSQL = """
        SELECT \(readColumns.names.joined(separator: ", ")) FROM notification WHERE app_id = ? AND notification_id = ?
        """
}

extension PendingSummaries {
    /// Merges every notification once into its summary, and writes the rollup deltas that unsettling them makes,
    /// inside the caller's transaction (``SQLSession/mergeSummaries(_:devices:)``); ``removeAll()`` once it has
    /// committed.
    func write(_ db: Database) throws {
        try SQLiteSession(db: db).mergeSummaries(self)
    }
}
