import PushTraceCore
import PushTraceRecords

/// A notification's key in the order keys are compared everywhere (byte by byte, PostgreSQL's `COLLATE "C"`): the
/// order summaries are locked and written in.
package struct NotificationRowKey: Hashable {
    package var appID: String
    package var notificationID: String

    package init(appID: String, notificationID: String) {
        self.appID = appID
        self.notificationID = notificationID
    }

    package static func precedes(_ a: NotificationRowKey, _ b: NotificationRowKey) -> Bool {
        if a.appID != b.appID { return a.appID.utf8.lexicographicallyPrecedes(b.appID.utf8) }
        return a.notificationID.utf8.lexicographicallyPrecedes(b.notificationID.utf8)
    }
}

/// A device whose upload may unsettle its pushes that were waiting for it (`awaiting_device_logs`): those sent at
/// or before `sentBy`.
package struct AwaitingDevice: Hashable {
    package var appID: String
    package var deviceID: String
    package var sentBy: Int64

    package init(appID: String, deviceID: String, sentBy: Int64) {
        self.appID = appID
        self.deviceID = deviceID
        self.sentBy = sentBy
    }
}

extension SQLSession {
    /// Merges each notification's facts into its stored summary (which is then to be settled again; a summary
    /// that was settled takes its counts out of the rollups first), unsettles the pushes of `devices` that were
    /// waiting for them, and writes every rollup delta once: inside the caller's transaction.
    ///
    /// Where several servers write at once (``SQLDialect/rowLock``), the notifications not stored yet are first
    /// inserted with their facts, in key order; then every other row is locked in one pass, in key order, before it
    /// is read, so that two servers' groups wait for each other rather than deadlock and nothing is merged into a
    /// stale read (an insert that meets another transaction's new row waits for it, then merges into it or, if it
    /// rolled back, inserts it). The pushes to unsettle are found without a lock, those that may have become
    /// `awaiting_device_logs` meanwhile included (a server settling them now), and checked again once locked.
    package func mergeSummaries(_ pending: PendingSummaries, devices: Set<AwaitingDevice> = []) throws {
        // The notifications in key order, each with its new facts (none: only waiting for its device).
        var entries = pending.all.map {
            (key: NotificationRowKey(appID: $0.appID, notificationID: $0.notificationID), facts: Optional($0.facts))
        }
        let locks = dialect.rowLock != nil
        var waiting: [NotificationRowKey: AwaitingDevice] = [:]
        let awaiting: SQLStatement =
            locks ? "(cause = 'awaiting_device_logs' OR cause IS NULL)" : "cause = 'awaiting_device_logs'"
        // Every device's waiting pushes in one statement a chunk: where each statement is a round trip, a group of
        // uploads from many devices costs a few, not one per device.
        let devices = Array(devices)
        for start in stride(from: 0, to: devices.count, by: Self.chunk) {
            let chunk = devices[start..<min(start + Self.chunk, devices.count)]
            let list = SQLStatement.joined(chunk.map { "(\($0.appID), \($0.deviceID), \($0.sentBy))" }, separator: ", ")
            for row in try rows(
                """
                SELECT d.column1 AS app_id, d.column2 AS device_id, d.column3 AS sent_by, notification_id
                FROM (VALUES \(list)) AS d CROSS JOIN notification\(unsafeRaw: dialect.indexedBy("notification_awaiting"))
                WHERE notification.app_id = d.column1 AND notification.device_id = d.column2 AND \(awaiting)
                    AND sent_ts <= d.column3
                """)
            {
                let device = AwaitingDevice(
                    appID: try row.decode("app_id"), deviceID: try row.decode("device_id"), sentBy: try row.decode("sent_by"))
                let key = NotificationRowKey(appID: device.appID, notificationID: try row.decode("notification_id"))
                // Two bundles of the device in one group: the later upload decides.
                if (waiting[key]?.sentBy ?? .min) < device.sentBy { waiting[key] = device }
            }
        }
        if !waiting.isEmpty {
            let merging = Set(entries.map(\.key))
            entries += waiting.keys.filter { !merging.contains($0) }.map { ($0, nil) }
        }
        guard !entries.isEmpty else { return }
        // Written in key order by both engines: PostgreSQL locks in it, and SQLite's pages fill up fuller.
        entries.sort { NotificationRowKey.precedes($0.key, $1.key) }
        let rollups = RollupDeltas()
        let write = SummaryStatements(dialect)
        var upserts = UpsertBatch { write.upsert($0.count) }
        // Notifications with a collapse ID that reached their device, by when they were sent: they may replace the
        // device's earlier ones (`replaced`). And each device's latest-sent notification its records now reach:
        // APNs may have kept it instead of the device's earlier pushes (`coalesced_offline`).
        var replacers: [AwaitingDevice] = []
        var keepers: [AwaitingDevice] = []
        // Where rows are locked, a notification new to the store is inserted with its facts at once, in key order:
        // one row version and one set of index entries. Creating it empty and then updating it wrote both twice, as
        // no update of a summary is HOT (each changes an indexed column). Only those already stored are locked, read
        // and merged below.
        var inserted: Set<NotificationRowKey> = []
        if locks {
            let creating = entries.compactMap { entry in entry.facts.map { (key: entry.key, facts: $0) } }
            let perStatement = dialect.rowsPerUpsert
            for start in stride(from: 0, to: creating.count, by: perStatement) {
                inserted.formUnion(try insertSummaries(creating[start..<min(start + perStatement, creating.count)]))
            }
        }
        for start in stride(from: 0, to: entries.count, by: Self.chunk) {
            let chunk = entries[start..<min(start + Self.chunk, entries.count)]
            let toLock = chunk.map(\.key).filter { !inserted.contains($0) }
            var stored = toLock.isEmpty ? [:] : try lockedSummaries(toLock[...])
            if locks {
                // A summary retention deleted meanwhile: created again, and locked (out of order, rarely).
                let merging = chunk.filter { $0.facts != nil && !inserted.contains($0.key) }.map(\.key)
                for _ in 0..<3 {
                    let missing = merging.filter { stored[$0] == nil }[...]
                    guard !missing.isEmpty else { break }
                    try createSummaries(missing)
                    stored.merge(try lockedSummaries(missing)) { $1 }
                }
                if let lost = merging.first(where: { stored[$0] == nil }) {
                    throw StoreError.noRow(
                        "the summary of \(lost.appID) / \(lost.notificationID), which retention kept deleting while "
                            + "records were merged into it: try again")
                }
            }
            for (key, new) in chunk {
                let old = stored[key]
                if let new {
                    var merged = new
                    if let (facts, cause) = old {
                        if let cause {
                            rollups.add(appID: key.appID, notificationID: key.notificationID, facts: facts, cause: cause, sign: -1)
                        }
                        merged = facts
                        merged.merge(new)
                    }
                    // One that insertSummaries stored holds these facts already.
                    if !inserted.contains(key) {
                        try upserts.add([.text(key.appID), .text(key.notificationID), .null] + merged.storedValues, to: self)
                    }
                    if merged.causeFlags.contains(.collapses), merged.deviceIDFromDevice, let device = merged.deviceID,
                        let sent = merged.sentTs
                    {
                        replacers.append(AwaitingDevice(appID: key.appID, deviceID: device, sentBy: sent))
                    }
                    if new.deviceIDFromDevice, let device = merged.deviceID, let sent = merged.sentTs {
                        keepers.append(AwaitingDevice(appID: key.appID, deviceID: device, sentBy: sent))
                    }
                } else if let waited = waiting[key], let (facts, cause) = old, cause == "awaiting_device_logs",
                    facts.deviceID == waited.deviceID, let sentTs = facts.sentTs, sentTs <= waited.sentBy
                {
                    rollups.add(appID: key.appID, notificationID: key.notificationID, facts: facts, cause: cause!, sign: -1)
                    try send(rendered: write.unsettle, [.text(key.appID), .text(key.notificationID)])
                }
            }
            // Written before the next chunk, and before the device's neighbours are read below.
            try upserts.flush(to: self)
        }
        try unsettleNeighbours(of: replacers, settled: .notExpanded, flag: .collapses, rollups: rollups, unsettle: write.unsettle)
        // The latest-sent of each device only: it reaches back furthest.
        let latest = Dictionary(keepers.map { ("\($0.appID)\u{0}\($0.deviceID)", $0) }) { $0.sentBy >= $1.sentBy ? $0 : $1 }
        try unsettleNeighbours(
            of: Array(latest.values), settled: .notDelivered, flag: .expires, rollups: rollups, unsettle: write.unsettle)
        try rollups.write(to: self)
    }

    /// Unsettles the notifications a later one that reached the same device may change the answer of
    /// (docs/protocol.md#causes): those sent within ``DeviceNeighbourWindow`` before it, settled `settled`, whose
    /// flags hold `flag`. A `not_expanded` one that carried a collapse ID may now be `replaced`; a `not_delivered` one
    /// with an expiration, `coalesced_offline`. Their cause is decided again, reading the device's later
    /// notifications. Where rows are locked, one another server holds is passed over: its merge unsettles it anyway.
    private func unsettleNeighbours(
        of later: [AwaitingDevice], settled cause: Cause, flag: CauseFlags, rollups: RollupDeltas, unsettle: String
    ) throws {
        // Each cause's rows by device, through the partial index that holds them.
        let (index, condition) =
            cause == .notExpanded
            ? ("notification_by_device", "device_reached = 1 AND cause = 'not_expanded'")
            : ("notification_undelivered", "cause = 'not_delivered'")
        // Every device's neighbours in one statement a chunk; a notification near two of them is unsettled once.
        let later = Array(Set(later))
        var unsettled: Set<NotificationRowKey> = []
        for start in stride(from: 0, to: later.count, by: Self.chunk) {
            let list = SQLStatement.joined(
                later[start..<min(start + Self.chunk, later.count)].map {
                    let from = WireBounds.clampedEpoch($0.sentBy) - DeviceNeighbourWindow.milliseconds
                    return "(\($0.appID), \($0.deviceID), \(from), \($0.sentBy))"
                }, separator: ", ")
            for row in try rows(
                """
                SELECT notification.app_id, notification_id, cause, \(unsafeRaw: NotificationFacts.storedColumnList)
                FROM (VALUES \(list)) AS d CROSS JOIN notification\(unsafeRaw: dialect.indexedBy(index))
                WHERE notification.app_id = d.column1 AND notification.device_id = d.column2 AND \(unsafeRaw: condition)
                    AND sent_ts >= d.column3 AND sent_ts < d.column4\(unsafeRaw: dialect.rowLockSkippingLocked(of: "notification"))
                """)
            {
                let facts = try NotificationFacts(stored: row)
                guard facts.causeFlags.contains(flag) else { continue }
                let key = NotificationRowKey(appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"))
                guard unsettled.insert(key).inserted else { continue }
                rollups.add(appID: key.appID, notificationID: key.notificationID, facts: facts, cause: cause.rawValue, sign: -1)
                try send(rendered: unsettle, [.text(key.appID), .text(key.notificationID)])
            }
        }
    }

    /// Keys to a statement: few enough for either engine's limit on bound values.
    private static var chunk: Int { 500 }

    private static func keyList(_ keys: ArraySlice<NotificationRowKey>) -> SQLStatement {
        SQLStatement.joined(keys.map { "(\($0.appID), \($0.notificationID))" }, separator: ", ")
    }

    /// Creates the rows of `keys` (sorted) that do not exist, empty, in key order.
    private func createSummaries(_ keys: ArraySlice<NotificationRowKey>) throws {
        try execute(
            "INSERT INTO notification (app_id, notification_id) VALUES \(Self.keyList(keys)) ON CONFLICT DO NOTHING")
    }

    /// Inserts the summaries of `summaries` (sorted) that are not stored yet, each with its facts, in key order, and
    /// returns the keys it inserted: the others are stored already (or being inserted by another server, whose
    /// transaction this one waits for).
    private func insertSummaries(
        _ summaries: ArraySlice<(key: NotificationRowKey, facts: NotificationFacts)>
    ) throws -> Set<NotificationRowKey> {
        let names = ["cause"] + NotificationFacts.storedColumns.map(\.name)
        let values = SQLStatement.joined(
            summaries.map { summary in
                let binds = [.text(summary.key.appID), .text(summary.key.notificationID), .null] + summary.facts.storedValues
                return "(\(SQLStatement.joined(binds.map { SQLStatement(fragments: [.bind($0)]) }, separator: ", ")))"
            }, separator: ", ")
        var inserted: Set<NotificationRowKey> = []
        for row in try rows(
            """
            INSERT INTO notification (app_id, notification_id, \(unsafeRaw: names.joined(separator: ", "))) VALUES \(values)
            ON CONFLICT (app_id, notification_id) DO NOTHING RETURNING app_id, notification_id
            """)
        {
            inserted.insert(
                NotificationRowKey(appID: try row.decode("app_id"), notificationID: try row.decode("notification_id")))
        }
        return inserted
    }

    /// The stored summaries of `keys` (sorted) and their causes, each row locked in key order where rows are locked.
    private func lockedSummaries(
        _ keys: ArraySlice<NotificationRowKey>
    ) throws -> [NotificationRowKey: (NotificationFacts, String?)] {
        var stored: [NotificationRowKey: (NotificationFacts, String?)] = [:]
        // The keys as a subquery, not a bare VALUES list, which SQLite would compare against a scan of the table.
        let byteOrder = dialect.byteOrder
        let order: SQLStatement =
            dialect.rowLock.map { " ORDER BY app_id \(unsafeRaw: byteOrder), notification_id \(unsafeRaw: byteOrder)\(unsafeRaw: $0)" }
            ?? ""
        for row in try rows(
            """
            SELECT app_id, notification_id, cause, \(unsafeRaw: NotificationFacts.storedColumnList) FROM notification
            WHERE (app_id, notification_id) IN (SELECT column1, column2 FROM (VALUES \(Self.keyList(keys))) AS k)\(order)
            """)
        {
            let key = NotificationRowKey(appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"))
            stored[key] = (try NotificationFacts(stored: row), try row.decode("cause"))
        }
        return stored
    }
}

/// The statements that write summaries, rendered once per merge for the session's dialect.
private struct SummaryStatements {
    /// The upsert of `rows` summaries. Binds, row by row: app, notification, cause, then
    /// ``NotificationFacts/storedValues``.
    let upsert: (_ rows: Int) -> String
    /// Binds: app, notification.
    let unsettle: String

    init(_ dialect: some SQLDialect) {
        let names = ["cause"] + NotificationFacts.storedColumns.map(\.name)
        upsert = { rows in
            """
            INSERT\(dialect.orFail) INTO notification (app_id, notification_id, \(names.joined(separator: ", ")))
            VALUES \(dialect.valueLists(columns: names.count + 2, rows: rows))
            ON CONFLICT (app_id, notification_id) DO UPDATE SET \(names.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """
        }
        unsettle = """
            UPDATE\(dialect.orFail) notification SET cause = NULL WHERE app_id = \(dialect.placeholder(1)) AND notification_id = \(dialect.placeholder(2))
            """
    }
}

extension RollupDeltas {
    /// Adds every row's delta by upserts, inside the caller's transaction, and forgets them. An upsert adds under
    /// the row's lock: two servers adding to one row at once both count. Where rows are locked
    /// (``SQLDialect/rowLock``), they are written in key order.
    package func write(to session: some SQLSession) throws {
        let dialect = session.dialect
        var rows = all
        if dialect.rowLock != nil {
            rows.sort { a, b in
                a.rollup.table != b.rollup.table
                    ? a.rollup.table < b.rollup.table : a.key.lexicographicallyPrecedes(b.key, by: RollupValue.ordered)
            }
        }
        // Each rollup's rows gathered into statements of the dialect's size, in the order above: a table's rows are
        // sent before the next table's begin. Each table's texts are made once per call.
        var batches: [String: UpsertBatch] = [:]
        var current: String?
        for row in rows where row.measures.contains(where: { $0 != 0 }) || row.example != nil {
            var values: [SQLValue] = row.key.map(\.sqlValue) + row.measures.map(SQLValue.integer)
            if row.rollup.keepsExample { values.append(row.example.sqlValue) }
            let table = row.rollup.table
            if current != table, let current { try batches[current]?.flush(to: session) }
            current = table
            let rollup = row.rollup
            try batches[table, default: UpsertBatch { rollup.upsert(dialect, rows: $0.count) }].add(values, to: session)
        }
        if let current { try batches[current]?.flush(to: session) }
        removeAll()
    }
}

extension Rollup {
    /// The upsert that adds `rows` rows' deltas (binds, row by row: the keys, the measures, then the example where
    /// kept). The rows' keys differ: PostgreSQL refuses a statement that updates one row twice.
    func upsert(_ dialect: some SQLDialect, rows: Int = 1) -> String {
        let columns = keys + measures + (keepsExample ? ["example_id"] : [])
        var updates = measures.map { "\($0) = \(dialect.sum("\(table).\($0)", "excluded.\($0)"))" }
        if keepsExample { updates.append("example_id = coalesce(excluded.example_id, \(table).example_id)") }
        return """
            INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES \(dialect.valueLists(columns: columns.count, rows: rows))
            ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }
}

extension RollupValue {
    /// The value bound for this one.
    package var sqlValue: SQLValue {
        switch self {
        case .integer(let value): .integer(value)
        case .text(let value): .text(value)
        }
    }

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
