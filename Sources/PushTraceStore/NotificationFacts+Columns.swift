import Foundation
import PushTraceCore

/// One column of the `notification` table's summary: its name, and the ``NotificationFacts`` field it holds. The
/// field is reached by closures rather than key paths: a summary is read and written for every notification stored.
package struct SummaryColumn: Sendable {
    /// The column's name in both engines' tables.
    package let name: String
    /// The value written for `facts`.
    package let value: @Sendable (NotificationFacts) -> SQLValue
    /// Sets the field from the row's value of this column.
    package let read: @Sendable (inout NotificationFacts, StoredValue) throws -> Void

    init(
        _ name: String, _ value: @escaping @Sendable (NotificationFacts) -> SQLValue,
        _ read: @escaping @Sendable (inout NotificationFacts, StoredValue) throws -> Void
    ) {
        self.name = name
        self.value = value
        self.read = read
    }

    /// One column's stored value, decoded as its field's type.
    package struct StoredValue {
        let column: String
        let value: SQLValue

        /// The value as `T`; a NULL reads as `null` where one is given (a count or a flag of a row created empty).
        func decode<T: SQLValueConvertible>(null: T? = nil) throws -> T {
            if let null, value == .null { return null }
            guard let decoded = T(sqlValue: value) else {
                throw StoreError.wrongType(column, expected: "\(T.self)", found: value)
            }
            return decoded
        }
    }
}

/// The summary as the `notification` table keeps it, described once: the columns by name (docs/schema.md's table
/// of `notification` is checked against them), how a row is read into facts and how facts are written.
extension NotificationFacts {
    /// Every summary column but the key and `cause`.
    package static let storedColumns: [SummaryColumn] = [
        SummaryColumn("device_id", { $0.deviceID.sqlValue }, { $0.deviceID = try $1.decode() }),
        SummaryColumn("category", { $0.category.sqlValue }, { $0.category = try $1.decode() }),
        SummaryColumn("app_version", { $0.appVersion.sqlValue }, { $0.appVersion = try $1.decode() }),
        SummaryColumn("os", { $0.os.sqlValue }, { $0.os = try $1.decode() }),
        SummaryColumn("first_ts", { $0.firstTs.sqlValue }, { $0.firstTs = try $1.decode() }),
        SummaryColumn("last_ts", { $0.lastTs.sqlValue }, { $0.lastTs = try $1.decode() }),
        SummaryColumn("sent_ts", { $0.sentTs.sqlValue }, { $0.sentTs = try $1.decode() }),
        SummaryColumn("apns_status", { $0.apnsStatus.sqlValue }, { $0.apnsStatus = try $1.decode() }),
        SummaryColumn("has_alert", { $0.hasAlert.sqlValue }, { $0.hasAlert = try $1.decode() }),
        SummaryColumn("mutable_content", { $0.mutableContent.sqlValue }, { $0.mutableContent = try $1.decode() }),
        SummaryColumn("service_received", { $0.serviceReceived.sqlValue }, { $0.serviceReceived = try $1.decode(null: false) }),
        SummaryColumn("service_delivered", { $0.serviceDelivered.sqlValue }, { $0.serviceDelivered = try $1.decode(null: false) }),
        SummaryColumn("service_expired", { $0.serviceExpired.sqlValue }, { $0.serviceExpired = try $1.decode(null: false) }),
        SummaryColumn("service_ms", { $0.serviceMs.sqlValue }, { $0.serviceMs = try $1.decode() }),
        SummaryColumn("service_crashed", { $0.serviceCrashed.sqlValue }, { $0.serviceCrashed = try $1.decode(null: false) }),
        SummaryColumn("content_received", { $0.contentReceived.sqlValue }, { $0.contentReceived = try $1.decode(null: false) }),
        SummaryColumn("content_crashed", { $0.contentCrashed.sqlValue }, { $0.contentCrashed = try $1.decode(null: false) }),
        SummaryColumn("actions", { $0.actions.sqlValue }, { $0.actions = try $1.decode(null: 0) }),
        SummaryColumn("app_responses", { $0.appResponses.sqlValue }, { $0.appResponses = try $1.decode(null: 0) }),
        SummaryColumn("records", { $0.records.sqlValue }, { $0.records = try $1.decode(null: 0) }),
        SummaryColumn("device_reached", { $0.deviceIDFromDevice.sqlValue }, { $0.deviceIDFromDevice = try $1.decode(null: false) }),
        SummaryColumn("downloads", { $0.downloads.sqlValue }, { $0.downloads = try $1.decode(null: 0) }),
        SummaryColumn("download_bytes", { $0.downloadBytes.sqlValue }, { $0.downloadBytes = try $1.decode() }),
        SummaryColumn("attachment_failure", { $0.attachmentFailure.sqlValue }, { $0.attachmentFailure = try $1.decode() }),
        SummaryColumn("action_list", { actionList($0.actionRows).sqlValue }, { $0.actionRows = actionRows(stored: try $1.decode()) }),
        SummaryColumn(
            "cause_flags", { $0.causeFlags.storedValue.sqlValue },
            { $0.causeFlags = try ($1.decode() as Int64?).map(CauseFlags.init(storedValue:)) ?? CauseFlags() }),
    ]

    /// ``storedColumns``' names, comma-separated, for a statement's column list.
    package static let storedColumnList = storedColumns.map(\.name).joined(separator: ", ")

    /// The facts of a row that holds every one of ``storedColumns`` (and whatever else), by name.
    package init(stored row: SQLRow) throws {
        self.init()
        timesKnown = false
        for column in Self.storedColumns {
            guard let position = row.columns.position(of: column.name) else {
                throw StoreError.noColumn(column.name, row.columns.names)
            }
            try column.read(&self, SummaryColumn.StoredValue(column: column.name, value: row.values[position]))
        }
    }

    /// The values of ``storedColumns``, in their order.
    package var storedValues: [SQLValue] { Self.storedColumns.map { $0.value(self) } }

    /// The actions' JSON list as `notification.action_list` keeps it: `[[action, response], …]`, nil when none.
    package static func actionList(_ rows: [(action: String?, response: String?)]) -> String? {
        guard !rows.isEmpty else { return nil }
        return (try? JSONEncoder().encode(rows.map { [$0.action, $0.response] })).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The actions of a stored list (their times stay in the record blocks).
    package static func actionRows(stored list: String?) -> [(action: String?, response: String?)] {
        guard let list, let pairs = try? JSONDecoder().decode([[String?]].self, from: Data(list.utf8)) else { return [] }
        return pairs.map { ($0.first ?? nil, $0.count > 1 ? $0[1] : nil) }
    }
}

extension NotificationFacts {
    /// The statement that writes these facts, and `cause`, over the notification's existing summary row.
    package func update(appID: String, notificationID: String, cause: String?) -> SQLStatement {
        var assignments: [SQLStatement] = ["cause = \(cause)"]
        for column in Self.storedColumns {
            assignments.append("\(unsafeRaw: column.name) = \(column.value(self))")
        }
        return """
            UPDATE notification SET \(SQLStatement.joined(assignments, separator: ", "))
            WHERE app_id = \(appID) AND notification_id = \(notificationID)
            """
    }
}
