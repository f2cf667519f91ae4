import Foundation
import GRDB
import PushTraceStore

/// A summary as the `notification` table keeps it: read, merged in Swift, and written back whole.
extension NotificationFacts {
    /// The `notification` columns a summary is read from and written to, in ``init(stored:)`` order: `cause` at
    /// offset 24, then the actions' JSON list.
    static let columns = """
        device_id, category, app_version, os, first_ts, last_ts, sent_ts, apns_status, has_alert, mutable_content, \
        service_received, service_delivered, service_expired, service_ms, service_crashed, content_received, \
        content_crashed, actions, app_responses, records, device_reached, downloads, download_bytes, attachment_failure, \
        cause, action_list
        """

    /// A stored summary, read from ``columns`` starting at `offset`.
    init(stored row: Row, at offset: Int = 0) {
        self.init()
        deviceID = row[offset]
        category = row[offset + 1]
        appVersion = row[offset + 2]
        os = row[offset + 3]
        firstTs = row[offset + 4]
        lastTs = row[offset + 5]
        sentTs = row[offset + 6]
        apnsStatus = row[offset + 7]
        hasAlert = row[offset + 8]
        mutableContent = row[offset + 9]
        serviceReceived = row[offset + 10]
        serviceDelivered = row[offset + 11]
        serviceExpired = row[offset + 12]
        serviceMs = row[offset + 13]
        serviceCrashed = row[offset + 14]
        contentReceived = row[offset + 15]
        contentCrashed = row[offset + 16]
        actions = row[offset + 17]
        appResponses = row[offset + 18]
        records = row[offset + 19]
        deviceIDFromDevice = row[offset + 20]
        downloads = row[offset + 21]
        downloadBytes = row[offset + 22]
        attachmentFailure = row[offset + 23]
        actionRows = Self.actionRows(stored: row[offset + 25])
    }

    /// The actions' JSON list as `notification.action_list` keeps it: `[[action, response], …]`, nil when none.
    static func actionList(_ rows: [(action: String?, response: String?)]) -> String? {
        guard !rows.isEmpty else { return nil }
        let pairs = rows.map { [$0.action, $0.response] }
        return (try? JSONEncoder().encode(pairs)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The actions of a stored list (their times stay in the record blocks).
    static func actionRows(stored list: String?) -> [(action: String?, response: String?)] {
        guard let list, let pairs = try? JSONDecoder().decode([[String?]].self, from: Data(list.utf8)) else { return [] }
        return pairs.map { ($0.first ?? nil, $0.count > 1 ? $0[1] : nil) }
    }

    /// Writes these facts as the notification's summary, with `cause` (nil: to be settled). Every column is written
    /// as it is: what a summary holds is decided by ``add(_:ts:manifest:)`` and ``merge(_:)`` alone.
    func write(_ db: Database, appID: String, notificationID: String, cause: String?) throws {
        let statement = try db.cachedStatement(sql: Self.writeSQL)
        statement.setUncheckedArguments([
            appID, notificationID, deviceID, category, appVersion, os, firstTs, lastTs, sentTs, apnsStatus,
            hasAlert, mutableContent, serviceReceived, serviceDelivered, serviceExpired, serviceMs, serviceCrashed,
            contentReceived, contentCrashed, actions, appResponses, records, deviceIDFromDevice, downloads, downloadBytes,
            attachmentFailure, cause, Self.actionList(actionRows),
        ])
        try statement.execute()
    }

    /// `OR FAIL`: a constraint error ends the bundle (whose savepoint is then rolled back) rather than this statement
    /// alone, so SQLite keeps no statement journal for it.
    private static let writeSQL: String = {
        let names = columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return """
            INSERT OR FAIL INTO notification (app_id, notification_id, \(names.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: names.count + 2).joined(separator: ", ")))
            ON CONFLICT (app_id, notification_id) DO UPDATE SET \(names.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """
    }()

    /// The stored summary of a notification and its cause, or nil when there is none.
    static func read(_ db: Database, appID: String, notificationID: String) throws -> (facts: NotificationFacts, cause: String?)? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT \(columns) FROM notification WHERE app_id = ? AND notification_id = ?
                        """), arguments: [appID, notificationID])
        else { return nil }
        return (NotificationFacts(stored: row), row[24])
    }

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
