import GRDB
import PushTraceCore

/// Which stored lines `pushtrace export` reads back.
public struct ExportFilter: Sendable, Equatable {
    public var appID: String?
    /// Lines whose corrected time is at or after this (epoch ms); lines without a time are left out by a time bound.
    public var since: Int64?
    /// Lines whose corrected time is before this.
    public var until: Int64?
    /// Only the lines of this notification (any spelling of its ID: it is normalized as stored).
    public var notificationID: String?

    public init(appID: String? = nil, since: Int64? = nil, until: Int64? = nil, notificationID: String? = nil) {
        self.appID = appID
        self.since = since
        self.until = until
        self.notificationID = notificationID
    }
}

/// One stored line: exactly as it was received, and the time it is stored under (the device's time corrected by
/// its bundle's clock offset), when it has one.
public struct ExportedLine: Sendable {
    public var body: String
    public var correctedTs: Int64?
}

extension Store {
    /// Every accepted line that `filter` selects, in the order stored, handed to `line` one at a time: memory stays
    /// bounded however many there are. Runs in one read transaction, so the lines are those of one moment.
    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        var conditions: [String] = [], arguments: [(any DatabaseValueConvertible)?] = []
        if let app = filter.appID { conditions.append("app_id = ?"); arguments.append(app) }
        if let id = filter.notificationID {
            conditions.append("notification_id = ?")
            arguments.append(NotificationKey.normalize(id))
        }
        if let since = filter.since { conditions.append("ts >= ?"); arguments.append(since) }
        if let until = filter.until { conditions.append("ts < ?"); arguments.append(until) }
        let sql = "SELECT body, ts FROM record" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY id"
        try pool.read { db in
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
            while let row = try rows.next() {
                try line(ExportedLine(body: row[0], correctedTs: row[1]))
            }
        }
    }
}
