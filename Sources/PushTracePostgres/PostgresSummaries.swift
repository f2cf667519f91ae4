import Foundation
import NIOCore
import PostgresNIO
import PushTraceStore

/// A notification's key in the order PostgreSQL's `COLLATE "C"` sorts it (byte by byte), the order rows are locked in.
struct NotificationRowKey: Hashable {
    var appID: String
    var notificationID: String

    static func precedes(_ a: NotificationRowKey, _ b: NotificationRowKey) -> Bool {
        if a.appID != b.appID { return a.appID.utf8.lexicographicallyPrecedes(b.appID.utf8) }
        return a.notificationID.utf8.lexicographicallyPrecedes(b.notificationID.utf8)
    }
}

/// A device whose upload may unsettle its pushes that were waiting for it (`awaiting_device_logs`): those sent
/// at or before `sentBy`.
struct AwaitingDevice: Hashable {
    var appID: String
    var deviceID: String
    var sentBy: Int64
}

/// Summaries merged and rollups counted by several servers at once.
enum PostgresSummaryWriter {
    /// At the end of a group: merges each notification's facts into its stored summary (which is then to be
    /// settled again; a summary that was settled takes its counts out of the rollups first), unsettles the pushes
    /// of `devices` that were waiting for them, and writes every rollup delta once.
    ///
    /// Every row is locked in one pass, in key order, before it is read (so two servers' groups wait for each
    /// other rather than deadlock, and nothing is merged into a stale read): the pushes to unsettle are found
    /// without a lock, those that may have become `awaiting_device_logs` meanwhile included (a server settling
    /// them now), and checked again once locked.
    static func merge(_ pending: PendingSummaries, devices: Set<AwaitingDevice>, _ session: PostgresSession) throws {
        var facts: [NotificationRowKey: NotificationFacts] = [:]
        for (appID, notificationID, merged) in pending.all {
            facts[NotificationRowKey(appID: appID, notificationID: notificationID)] = merged
        }
        var waiting: [NotificationRowKey: AwaitingDevice] = [:]
        for device in devices {
            for row in try session.query(
                """
                SELECT notification_id FROM notification
                WHERE app_id = \(device.appID) AND device_id = \(device.deviceID)
                    AND (cause = 'awaiting_device_logs' OR cause IS NULL) AND sent_ts <= \(device.sentBy)
                """)
            {
                let key = NotificationRowKey(appID: device.appID, notificationID: try row.decode(String.self))
                // Two bundles of the device in one group: the later upload decides.
                if (waiting[key]?.sentBy ?? .min) < device.sentBy { waiting[key] = device }
            }
        }
        let keys = Set(facts.keys).union(waiting.keys).sorted(by: NotificationRowKey.precedes)
        guard !keys.isEmpty else { return }
        let rollups = RollupDeltas()
        // Rows that do not exist yet are created empty (an empty summary merged with facts is those facts), all of
        // them first, in key order; then every row is locked, in key order: one ascending pass of locks.
        let creating = keys.filter { facts[$0] != nil }
        for start in stride(from: 0, to: creating.count, by: 1_000) {
            try create(Array(creating[start..<min(start + 1_000, creating.count)]), session)
        }
        // In chunks, so that one statement's parameters stay bounded.
        for start in stride(from: 0, to: keys.count, by: 1_000) {
            let chunk = Array(keys[start..<min(start + 1_000, keys.count)])
            var stored = try lock(chunk, session)
            // A summary retention deleted meanwhile: created again, and locked (out of order, rarely).
            for _ in 0..<3 {
                let missing = chunk.filter { facts[$0] != nil && stored[$0] == nil }
                guard !missing.isEmpty else { break }
                try create(missing, session)
                stored.merge(try lock(missing, session)) { $1 }
            }
            if let lost = chunk.first(where: { facts[$0] != nil && stored[$0] == nil }) {
                throw PostgresStoreError.summaryVanished(lost.appID, lost.notificationID)
            }
            for key in chunk {
                guard let (old, cause, device, sentTs) = stored[key] else { continue }
                if let new = facts[key] {
                    if let cause { rollups.add(appID: key.appID, notificationID: key.notificationID, facts: old, cause: cause, sign: -1) }
                    var merged = old
                    merged.merge(new)
                    try write(merged, appID: key.appID, notificationID: key.notificationID, cause: nil, session)
                } else if let waited = waiting[key], cause == "awaiting_device_logs", device == waited.deviceID,
                    let sentTs, sentTs <= waited.sentBy
                {
                    rollups.add(appID: key.appID, notificationID: key.notificationID, facts: old, cause: cause!, sign: -1)
                    try session.query(
                        """
                        UPDATE notification SET cause = NULL WHERE app_id = \(key.appID) AND notification_id = \(key.notificationID)
                        """)
                }
            }
        }
        try write(rollups, session)
    }

    /// Creates the rows of `keys` (sorted) that do not exist, empty.
    private static func create(_ keys: [NotificationRowKey], _ session: PostgresSession) throws {
        try session.query(
            """
            INSERT INTO notification (app_id, notification_id)
            SELECT * FROM unnest(\(keys.map(\.appID))::text[], \(keys.map(\.notificationID))::text[]) AS k(a, n)
            ORDER BY a COLLATE "C", n COLLATE "C"
            ON CONFLICT DO NOTHING
            """)
    }

    /// Locks every row of `keys` (sorted) and reads it: its facts, cause, device and sent time.
    private static func lock(
        _ keys: [NotificationRowKey], _ session: PostgresSession
    )
        throws -> [NotificationRowKey: (NotificationFacts, String?, String?, Int64?)]
    {
        var stored: [NotificationRowKey: (NotificationFacts, String?, String?, Int64?)] = [:]
        for row in try session.sqlRows(
            """
            SELECT app_id, notification_id, cause, \(unescaped: NotificationFacts.storedColumnList) FROM notification
            WHERE (app_id, notification_id) IN (SELECT * FROM unnest(\(keys.map(\.appID))::text[], \(keys.map(\.notificationID))::text[]))
            ORDER BY app_id, notification_id FOR UPDATE
            """)
        {
            let key = NotificationRowKey(appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"))
            let facts = try NotificationFacts(stored: row)
            stored[key] = (facts, try row.decode("cause"), facts.deviceID, facts.sentTs)
        }
        return stored
    }

    /// Writes a summary whole (its row exists and is locked by the caller).
    static func write(
        _ facts: NotificationFacts, appID: String, notificationID: String, cause: String?,
        _ session: PostgresSession
    ) throws {
        try session.execute(facts.update(appID: appID, notificationID: notificationID, cause: cause))
    }

    /// Adds every row's delta by upserts, in key order, and forgets them. An upsert adds under the row's lock: two
    /// servers adding to one row at once both count.
    static func write(_ rollups: RollupDeltas, _ session: PostgresSession) throws {
        let rows = rollups.all.sorted { a, b in
            a.rollup.table != b.rollup.table
                ? a.rollup.table < b.rollup.table : a.key.lexicographicallyPrecedes(b.key, by: RollupValue.ordered)
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
        case (.text(let x), .text(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
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
