import Foundation
import NIOCore
import PostgresNIO
import PushTraceStore

/// A summary as the `notification` table keeps it (the same columns as the SQLite engine's): read, merged in Swift,
/// and written back whole.
extension NotificationFacts {
    /// The columns, in ``init(stored:at:)`` order: `cause` at offset 24, then the actions' JSON list.
    static let postgresColumns = [
        "device_id", "category", "app_version", "os", "first_ts", "last_ts", "sent_ts", "apns_status", "has_alert",
        "mutable_content", "service_received", "service_delivered", "service_expired", "service_ms", "service_crashed",
        "content_received", "content_crashed", "actions", "app_responses", "records", "device_reached", "downloads",
        "download_bytes", "attachment_failure", "cause", "action_list",
    ]
    static let postgresColumnList = postgresColumns.joined(separator: ", ")

    /// A stored summary and its cause, read from ``postgresColumns`` starting at `offset`.
    init(stored row: PostgresRandomAccessRow, at offset: Int = 0) throws {
        self.init()
        func text(_ at: Int) throws -> String? { try row[offset + at].decode(String?.self) }
        func int(_ at: Int) throws -> Int64? { try row[offset + at].decode(Int64?.self) }
        func flag(_ at: Int) throws -> Bool { try int(at) ?? 0 != 0 }
        deviceID = try text(0)
        category = try text(1)
        appVersion = try text(2)
        os = try text(3)
        firstTs = try int(4)
        lastTs = try int(5)
        sentTs = try int(6)
        apnsStatus = try int(7)
        hasAlert = try int(8).map { $0 != 0 }
        mutableContent = try int(9).map { $0 != 0 }
        serviceReceived = try flag(10)
        serviceDelivered = try flag(11)
        serviceExpired = try flag(12)
        serviceMs = try int(13)
        serviceCrashed = try flag(14)
        contentReceived = try flag(15)
        contentCrashed = try flag(16)
        actions = Int(try int(17) ?? 0)
        appResponses = Int(try int(18) ?? 0)
        records = Int(try int(19) ?? 0)
        deviceIDFromDevice = try flag(20)
        downloads = Int(try int(21) ?? 0)
        downloadBytes = try int(22)
        attachmentFailure = try text(23)
        actionRows = Self.storedActionRows(try text(25))
    }

    /// The actions' JSON list as `notification.action_list` keeps it: `[[action, response], …]`, nil when none.
    static func storedActionList(_ rows: [(action: String?, response: String?)]) -> String? {
        guard !rows.isEmpty else { return nil }
        return (try? JSONEncoder().encode(rows.map { [$0.action, $0.response] })).map { String(decoding: $0, as: UTF8.self) }
    }

    static func storedActionRows(_ list: String?) -> [(action: String?, response: String?)] {
        guard let list, let pairs = try? JSONDecoder().decode([[String?]].self, from: Data(list.utf8)) else { return [] }
        return pairs.map { ($0.first ?? nil, $0.count > 1 ? $0[1] : nil) }
    }

    /// Binds every column of ``postgresColumns`` (with `cause`), in order.
    func bind(_ binds: inout PostgresBindings, cause: String?) {
        func flag(_ value: Bool) -> Int64 { value ? 1 : 0 }
        binds.append(deviceID)
        binds.append(category)
        binds.append(appVersion)
        binds.append(os)
        binds.append(firstTs)
        binds.append(lastTs)
        binds.append(sentTs)
        binds.append(apnsStatus)
        binds.append(hasAlert.map(flag))
        binds.append(mutableContent.map(flag))
        binds.append(flag(serviceReceived))
        binds.append(flag(serviceDelivered))
        binds.append(flag(serviceExpired))
        binds.append(serviceMs)
        binds.append(flag(serviceCrashed))
        binds.append(flag(contentReceived))
        binds.append(flag(contentCrashed))
        binds.append(Int64(actions))
        binds.append(Int64(appResponses))
        binds.append(Int64(records))
        binds.append(flag(deviceIDFromDevice))
        binds.append(Int64(downloads))
        binds.append(downloadBytes)
        binds.append(attachmentFailure)
        binds.append(cause)
        binds.append(Self.storedActionList(actionRows))
    }
}

/// Summaries merged and rollups counted by several servers at once.
enum PostgresSummaryWriter {
    /// Merges each notification's facts (a group's) into its stored summary, which is then to be settled again: a
    /// summary that was settled takes its counts out of the rollups first. Rows are locked in key order (so that two
    /// servers' groups wait for each other rather than deadlock) and merged under the lock: no update is lost.
    static func merge(_ pending: PendingSummaries, _ session: PostgresSession) throws {
        let all = pending.all.sorted { ($0.appID, $0.notificationID) < ($1.appID, $1.notificationID) }
        guard !all.isEmpty else { return }
        let rollups = RollupDeltas()
        // In chunks, so that one statement's parameters stay bounded.
        for start in stride(from: 0, to: all.count, by: 1_000) {
            let chunk = all[start..<min(start + 1_000, all.count)]
            let apps = chunk.map(\.appID), ids = chunk.map(\.notificationID)
            // Rows that do not exist yet are created empty (an empty summary merged with facts is those facts), so
            // that every row can then be locked and merged alike.
            try session.query("""
                INSERT INTO notification (app_id, notification_id)
                SELECT * FROM unnest(\(apps)::text[], \(ids)::text[]) ORDER BY 1, 2
                ON CONFLICT DO NOTHING
                """)
            var stored: [String: [String: (NotificationFacts, String?)]] = [:]
            for row in try session.query("""
                SELECT app_id, notification_id, \(unescaped: NotificationFacts.postgresColumnList) FROM notification
                WHERE (app_id, notification_id) IN (SELECT * FROM unnest(\(apps)::text[], \(ids)::text[]))
                ORDER BY app_id, notification_id FOR UPDATE
                """) {
                let columns = row.makeRandomAccess()
                let app = try columns[0].decode(String.self), id = try columns[1].decode(String.self)
                stored[app, default: [:]][id] = (try NotificationFacts(stored: columns, at: 2), try columns[26].decode(String?.self))
            }
            for (appID, notificationID, facts) in chunk {
                guard let (old, cause) = stored[appID]?[notificationID] else { continue }
                if let cause { rollups.add(appID: appID, notificationID: notificationID, facts: old, cause: cause, sign: -1) }
                var merged = old
                merged.merge(facts)
                try write(merged, appID: appID, notificationID: notificationID, cause: nil, session)
            }
        }
        try write(rollups, session)
    }

    /// Writes a summary whole (its row exists and is locked by the caller).
    static func write(_ facts: NotificationFacts, appID: String, notificationID: String, cause: String?,
                      _ session: PostgresSession) throws {
        var binds = PostgresBindings()
        facts.bind(&binds, cause: cause)
        binds.append(appID)
        binds.append(notificationID)
        let columns = NotificationFacts.postgresColumns
        try session.query(PostgresQuery(unsafeSQL: """
            UPDATE notification SET \(columns.enumerated().map { "\($0.element) = $\($0.offset + 1)" }.joined(separator: ", "))
            WHERE app_id = $\(columns.count + 1) AND notification_id = $\(columns.count + 2)
            """, binds: binds))
    }

    /// Adds every row's delta by upserts, in key order, and forgets them. An upsert adds under the row's lock: two
    /// servers adding to one row at once both count.
    static func write(_ rollups: RollupDeltas, _ session: PostgresSession) throws {
        let rows = rollups.all.sorted { a, b in
            a.rollup.table != b.rollup.table ? a.rollup.table < b.rollup.table : a.key.lexicographicallyPrecedes(b.key, by: RollupValue.ordered)
        }
        for row in rows where row.measures.contains(where: { $0 != 0 }) || row.example != nil {
            var binds = PostgresBindings()
            for value in row.key {
                switch value {
                case .integer(let number): binds.append(number)
                case .text(let text): binds.append(text)
                }
            }
            for measure in row.measures { binds.append(measure) }
            if row.rollup.keepsExample { binds.append(row.example) }
            try session.query(PostgresQuery(unsafeSQL: row.rollup.postgresUpsert, binds: binds))
        }
        rollups.removeAll()
    }
}

extension RollupValue {
    /// An order of key values (integers before texts), for locking rollup rows in one order.
    static func ordered(_ a: RollupValue, _ b: RollupValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y
        case (.text(let x), .text(let y)): return x < y
        case (.integer, .text): return true
        case (.text, .integer): return false
        }
    }
}

extension Rollup {
    /// The upsert that adds one row's delta.
    var postgresUpsert: String {
        let columns = keys + measures + (keepsExample ? ["example_id"] : [])
        // Saturating, as SQLite's sums are (a hostile client can claim huge download sizes): an overflow would
        // otherwise fail every later settling of the row.
        var updates = measures.map {
            "\($0) = least(greatest(\(table).\($0)::numeric + excluded.\($0), -9223372036854775808), 9223372036854775807)::bigint"
        }
        if keepsExample { updates.append("example_id = coalesce(excluded.example_id, \(table).example_id)") }
        return """
            INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")))
            ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }
}
