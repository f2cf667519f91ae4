import Foundation

/// One column of the `notification` table's summary: its name, and the ``NotificationFacts`` field it holds.
package struct SummaryColumn: Sendable {
    /// The column's name in both engines' tables.
    package let name: String
    /// The value written for `facts`.
    package let value: @Sendable (NotificationFacts) -> SQLValue
    /// Sets the field from the row's column of that name.
    package let read: @Sendable (inout NotificationFacts, SQLRow) throws -> Void

    /// A column that holds the field at `field` as it is; a NULL reads as `null` where one is given (a count or a
    /// flag of a row created empty).
    static func field<T: SQLValueConvertible & Sendable>(
        _ name: String, _ field: WritableKeyPath<NotificationFacts, T> & Sendable, null: T? = nil
    ) -> SummaryColumn {
        SummaryColumn(
            name: name, value: { $0[keyPath: field].sqlValue },
            read: { facts, row in
                if let null, let position = row.columns.position(of: name), row.values[position] == .null {
                    facts[keyPath: field] = null
                } else {
                    facts[keyPath: field] = try row.decode(name)
                }
            })
    }
}

/// The summary as the `notification` table keeps it, described once: the columns by name (docs/schema.md's table
/// of `notification` is checked against them), how a row is read into facts and how facts are written.
extension NotificationFacts {
    /// Every summary column but the key and `cause`.
    package static let storedColumns: [SummaryColumn] = [
        .field("device_id", \.deviceID),
        .field("category", \.category),
        .field("app_version", \.appVersion),
        .field("os", \.os),
        .field("first_ts", \.firstTs),
        .field("last_ts", \.lastTs),
        .field("sent_ts", \.sentTs),
        .field("apns_status", \.apnsStatus),
        .field("has_alert", \.hasAlert),
        .field("mutable_content", \.mutableContent),
        .field("service_received", \.serviceReceived, null: false),
        .field("service_delivered", \.serviceDelivered, null: false),
        .field("service_expired", \.serviceExpired, null: false),
        .field("service_ms", \.serviceMs),
        .field("service_crashed", \.serviceCrashed, null: false),
        .field("content_received", \.contentReceived, null: false),
        .field("content_crashed", \.contentCrashed, null: false),
        .field("actions", \.actions, null: 0),
        .field("app_responses", \.appResponses, null: 0),
        .field("records", \.records, null: 0),
        .field("device_reached", \.deviceIDFromDevice, null: false),
        .field("downloads", \.downloads, null: 0),
        .field("download_bytes", \.downloadBytes),
        .field("attachment_failure", \.attachmentFailure),
        SummaryColumn(
            name: "action_list", value: { actionList($0.actionRows).sqlValue },
            read: { facts, row in facts.actionRows = actionRows(stored: try row.decode("action_list")) }),
    ]

    /// ``storedColumns``' names, comma-separated, for a statement's column list.
    package static let storedColumnList = storedColumns.map(\.name).joined(separator: ", ")

    /// The facts of a row that holds every one of ``storedColumns`` (and whatever else), by name.
    package init(stored row: SQLRow) throws {
        self.init()
        for column in Self.storedColumns { try column.read(&self, row) }
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
