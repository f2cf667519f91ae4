import Foundation
import GRDB
import PushTraceStore

/// A summary as the `notification` table keeps it (``NotificationFacts/storedColumns``): read, merged in Swift,
/// and written back whole.
extension NotificationFacts {
    /// Writes these facts as the notification's summary, with `cause` (nil: to be settled). Every column is written
    /// as it is: what a summary holds is decided by ``add(_:ts:manifest:)`` and ``merge(_:)`` alone.
    func write(_ db: Database, appID: String, notificationID: String, cause: String?) throws {
        let statement = try db.cachedStatement(sql: Self.writeSQL)
        try statement.bind([appID.sqlValue, notificationID.sqlValue, cause.sqlValue] + storedValues)
        try statement.execute()
    }

    /// `OR FAIL`: a constraint error ends the bundle (whose savepoint is then rolled back) rather than this statement
    /// alone, so SQLite keeps no statement journal for it.
    private static let writeSQL: String = {
        let names = ["cause"] + storedColumns.map(\.name)
        return """
            INSERT OR FAIL INTO notification (app_id, notification_id, \(names.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: names.count + 2).joined(separator: ", ")))
            ON CONFLICT (app_id, notification_id) DO UPDATE SET \(names.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """
    }()

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

    /// Merges these facts (a group's, for one notification) into the stored summary, which is then to be settled
    /// again: a summary that was settled takes its counts out of the rollups first.
    func upsert(_ db: Database, appID: String, notificationID: String, rollups: RollupDeltas) throws {
        var merged = self
        if let stored = try Self.read(db, appID: appID, notificationID: notificationID) {
            if let cause = stored.cause {
                rollups.add(
                    appID: appID, notificationID: notificationID, facts: stored.facts, cause: cause,
                    sign: -1)
            }
            merged = stored.facts
            merged.merge(self)
        }
        try merged.write(db, appID: appID, notificationID: notificationID, cause: nil)
    }
}

extension PendingSummaries {
    /// Upserts every notification once, and the rollup deltas that unsettling them makes, inside the caller's
    /// transaction; ``removeAll()`` once it has committed.
    func write(_ db: Database) throws {
        let rollups = RollupDeltas()
        for (appID, notificationID, facts) in all {
            try facts.upsert(db, appID: appID, notificationID: notificationID, rollups: rollups)
        }
        try rollups.write(db)
    }
}
