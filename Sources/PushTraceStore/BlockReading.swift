import PushTraceCore
import PushTraceRecords

/// Reads record blocks back, and what a notification's diagnosis needs (``DiagnosisAssembly``), with statements
/// written once for every engine. Used by one thread at a time, inside whatever snapshot its engine opened.
package struct BlockReading<Session: SQLSession>: DiagnosisSource {
    /// The lines name a device that none of the notification's bundles does: its records were not read with them.
    private struct OtherDevice: Error {}

    package let session: Session
    package let reader: StoredLineReader
    private let dictionary: (UInt32) -> [UInt8]?
    /// The config in force per device and process, with its span: a device's notifications share it.
    private let spans = ConfigSpans()

    /// `dictionary` finds a block dictionary's bytes by its Adler-32.
    package init(_ session: Session, dictionary: @escaping (UInt32) -> [UInt8]?) {
        self.session = session
        self.dictionary = dictionary
        reader = StoredLineReader(dictionary: dictionary)
    }

    /// The columns ``block(_:at:)`` reads, for a query over `record_block b JOIN bundle u`.
    package static var columns: String { "b.id, b.lines, b.raw_bytes, b.data, u.app_id, u.device_id, u.clock_offset_ms" }

    /// A block selected with ``columns``, starting at column `first`.
    package static func block(_ row: SQLRow, at first: Int = 0) throws -> StoredBlockRow {
        StoredBlockRow(
            id: try row.decode(at: first), lines: try row.decode(at: first + 1), rawBytes: try row.decode(at: first + 2),
            data: try row.decode(at: first + 3, as: SQLBytes.self).bytes, appID: try row.decode(at: first + 4),
            deviceID: try row.decode(at: first + 5), clockOffsetMs: try row.decode(at: first + 6))
    }

    /// Where the last read of one notification's lines stopped at the reader's limits; nil when it read them all.
    package var cut: TimelineCut? { reader.cut }

    package var neighbourSession: Session { session }

    // MARK: One notification

    /// What one notification's diagnosis needs, read with one statement (its blocks, and the last-seen time of the
    /// devices whose bundles hold them), then the config in force, which only the first event's time picks. Nil when
    /// the lines name a device that no such bundle does (a `push.sent` alone names one): the caller reads it again
    /// with ``input(appID:notificationID:lines:cut:)``, in one snapshot.
    package func input(appID: String, notificationID: String) async throws -> DiagnosisInput? {
        let key = NotificationBlockKey.of(appID: appID, notificationID: notificationID)
        var devices = Set<String>()
        var lastSeen: [String: Int64] = [:]
        let lines = try await reader.lines(appID: appID, notificationID: notificationID) { each in
            try await session.each(Self.diagnosis(key: key, appID: appID), preparedAs: .diagnosis) { row in
                let device: String? = try row.decode(at: 5)
                if let device { devices.insert(device) }
                if try row.decode(at: 0, as: Int64.self) == 0 {
                    try each(
                        StoredBlockRow(
                            id: try row.decode(at: 1), lines: try row.decode(at: 2), rawBytes: try row.decode(at: 3),
                            data: try row.decode(at: 4, as: SQLBytes.self).bytes, appID: appID, deviceID: device,
                            clockOffsetMs: try row.decode(at: 6)))
                } else if let device {
                    lastSeen[device] = try row.decode(at: 6)
                }
            }
        }
        do {
            return try await DiagnosisAssembly.input(
                appID: appID, notificationID: notificationID, lines: lines, cut: reader.cut,
                configs: { try await configs(appID: appID, deviceID: $0, at: $1) },
                lastSeen: { device in
                    guard devices.contains(device) else { throw OtherDevice() }
                    return lastSeen[device]
                },
                neighbours: { try await neighbours(appID: appID, deviceID: $0, sentAfter: $1) })
        } catch is OtherDevice {
            return nil
        }
    }

    /// What one notification's diagnosis needs, from lines already read, statement by statement.
    package func input(appID: String, notificationID: String, lines: [StoredLine], cut: TimelineCut? = nil) async throws -> DiagnosisInput {
        try await DiagnosisAssembly.input(
            appID: appID, notificationID: notificationID, lines: lines, cut: cut,
            configs: { try await configs(appID: appID, deviceID: $0, at: $1) },
            lastSeen: { try await lastSeen(appID: appID, deviceID: $0) },
            neighbours: { try await neighbours(appID: appID, deviceID: $0, sentAfter: $1) })
    }

    /// The statement a why reads first, which an engine may keep prepared. Part 0: a notification's blocks, by id,
    /// up to the reader's limit. Part 1: the last-seen times of the devices whose bundles hold them.
    package static func diagnosis(key: Int64, appID: String) -> SQLStatement {
        """
        WITH blk AS (
            SELECT b.id, b.lines, b.raw_bytes, b.data, u.device_id, u.clock_offset_ms FROM notification_block n
            JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
            WHERE n.key = \(key) AND u.app_id = \(appID) ORDER BY b.id LIMIT \(unsafeRaw: "\(StoredLineReader.blockLimit + 1)")
        ), dev AS (SELECT DISTINCT device_id FROM blk WHERE device_id IS NOT NULL)
        SELECT 0 AS part, id, lines, raw_bytes, data, device_id, clock_offset_ms AS n1 FROM blk
        UNION ALL
        SELECT 1, NULL, NULL, NULL, NULL, d.device_id, d.last_seen
        FROM dev JOIN device d ON d.app_id = \(appID) AND d.device_id = dev.device_id
        ORDER BY part, id, n1
        """
    }

    /// The corrected time of the device's latest upload, or nil when none is stored.
    package func lastSeen(appID: String, deviceID: String) async throws -> Int64? {
        try await session.rows("SELECT last_seen FROM device WHERE app_id = \(appID) AND device_id = \(deviceID)")
            .first?.decode(at: 0)
    }

    /// The stored lines of one app's notification, in the order they were stored, up to the reader's limits
    /// (``StoredLineReader/blockLimit``; one block more is asked for, to know there are more).
    package func lines(appID: String, notificationID: String) async throws -> [StoredLine] {
        let key = NotificationBlockKey.of(appID: appID, notificationID: notificationID)
        return try await reader.lines(appID: appID, notificationID: notificationID) { each in
            try await session.each(
                """
                SELECT \(unsafeRaw: Self.columns) FROM notification_block n
                JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
                WHERE n.key = \(key) AND u.app_id = \(appID) ORDER BY b.id LIMIT \(Int64(StoredLineReader.blockLimit + 1))
                """
            ) { row in try each(try Self.block(row)) }
        }
    }

    // MARK: Many notifications

    /// The lines of many notifications, in the order of `keys`, each up to the reader's block limit: what settling a
    /// batch needs, ``SQLDialect/keysPerRead`` notifications to a statement, each read by a descent of the index.
    package func lines(of keys: [NotificationRowKey]) async throws -> [[StoredLine]] {
        let perRead = session.dialect.keysPerRead
        guard perRead > 1 else {
            var found: [[StoredLine]] = []
            for key in keys { found.append(try await lines(appID: key.appID, notificationID: key.notificationID)) }
            return found
        }
        let hashes = Array(Set(keys.map { NotificationBlockKey.of(appID: $0.appID, notificationID: $0.notificationID) })).sorted()
        var blocksByKey: [Int64: [StoredBlockRow]] = [:]
        for start in stride(from: 0, to: hashes.count, by: perRead) {
            let each = hashes[start..<min(start + perRead, hashes.count)].enumerated().map { offset, key -> SQLStatement in
                """
                SELECT * FROM (
                    SELECT key, block FROM notification_block WHERE key = \(key)
                    ORDER BY block LIMIT \(Int64(StoredLineReader.blockLimit + 1))
                ) AS k\(unsafeRaw: "\(offset)")
                """
            }
            try await session.each(
                """
                SELECT n.key, \(unsafeRaw: Self.columns) FROM (\(SQLStatement.joined(each, separator: " UNION ALL "))) AS n
                JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref ORDER BY b.id
                """
            ) { row in
                blocksByKey[try row.decode(at: 0), default: []].append(try Self.block(row, at: 1))
            }
        }
        var found: [[StoredLine]] = []
        for key in keys {
            let blocks = blocksByKey[NotificationBlockKey.of(appID: key.appID, notificationID: key.notificationID)] ?? []
            found.append(
                try await reader.lines(appID: key.appID, notificationID: key.notificationID) { each in
                    for block in blocks { try each(block) }
                })
        }
        return found
    }

    // MARK: Config in force

    /// The config record of each process in force at `at`: the latest at or before it, with the time of the next
    /// one (``ConfigSpans``: a device's notifications settled together share them), in one statement.
    package func configs(appID: String, deviceID: String, at: Int64) async throws -> [ProcessKind: StoredConfig] {
        let processes = DiagnosisAssembly.configuredProcesses
        var found: [ProcessKind: StoredConfig] = [:]
        let known = processes.compactMap { spans.span(appID: appID, deviceID: deviceID, process: $0, at: at) }
        guard known.count < processes.count else {
            for (process, span) in zip(processes, known) { found[process] = span.config }
            return found
        }
        var spansFound: [ProcessKind: (config: StoredConfig?, next: Int64?)] = [:]
        for row in try await session.rows(Self.configInForce(appID: appID, deviceID: deviceID, at: at), preparedAs: .configInForce) {
            guard let kind = ProcessKind(rawValue: try row.decode(at: 0)) else { continue }
            let ts: Int64 = try row.decode(at: 1)
            if ts > at {
                spansFound[kind, default: (nil, nil)].next = ts
            } else if row.values[3] != .null {
                let (deviceTs, body): (Int64?, SQLValue) = (try row.decode(at: 2), row.values[3])
                spansFound[kind, default: (nil, nil)].config = StoredConfig(ts: ts) { [dictionary] in
                    try DiagnosisAssembly.configEntry(
                        ts: ts, deviceTs: deviceTs, deviceID: deviceID,
                        body: ConfigBody.text(stored: body, dictionaries: dictionary))
                }
            }
        }
        for process in processes {
            let span = spansFound[process] ?? (nil, nil)
            spans.remember(ConfigSpan(config: span.config, next: span.next), appID: appID, deviceID: deviceID, process: process)
            found[process] = span.config
        }
        return found
    }

    /// For each process that records config, the latest record at or before `at` and the time of the next one: two
    /// descents of the key each, so a device with any number of config records costs the same. A row per record
    /// found; a next time comes with no body.
    package static func configInForce(appID: String, deviceID: String, at: Int64) -> SQLStatement {
        let parts = DiagnosisAssembly.configuredProcesses.enumerated().map { offset, process -> SQLStatement in
            let key: SQLStatement = "app_id = \(appID) AND device_id = \(deviceID) AND process = \(process.rawValue)"
            return """
                SELECT * FROM (
                    SELECT process, ts, device_ts, body_ref FROM config WHERE \(key) AND ts <= \(at) ORDER BY ts DESC LIMIT 1
                ) AS in_force_\(unsafeRaw: "\(offset)")
                UNION ALL
                SELECT * FROM (
                    SELECT process, ts, device_ts, body_ref FROM config WHERE \(key) AND ts > \(at) ORDER BY ts LIMIT 1
                ) AS next_\(unsafeRaw: "\(offset)")
                """
        }
        return """
            SELECT c.process, c.ts, c.device_ts, cb.body FROM (\(SQLStatement.joined(parts, separator: "\nUNION ALL\n"))) AS c
            LEFT JOIN config_body cb ON cb.id = c.body_ref AND c.ts <= \(at)
            """
    }

    // MARK: Every block

    /// How many blocks an export reads per statement: memory stays bounded by a page of blocks.
    static var blocksPerPage: Int64 { 64 }

    /// The blocks of bundles whose time span meets the range (all when none), of one app or every app, in the order
    /// stored, a page at a time.
    package func forEachBlock(appID: String?, since: Int64?, until: Int64?, _ body: (StoredBlockRow) throws -> Void) async throws {
        let span = BundleTimeSpan.overlap(since: since, until: until)
        let app: SQLStatement = appID.map { "AND u.app_id = \($0)" } ?? ""
        var after: Int64 = 0
        while true {
            let rows = try await session.rows(
                """
                SELECT \(unsafeRaw: Self.columns) FROM record_block b JOIN bundle u ON u.id = b.bundle_ref
                WHERE b.id > \(after) \(app) AND \(span) ORDER BY b.id LIMIT \(Self.blocksPerPage)
                """)
            for row in rows {
                let block = try Self.block(row)
                try body(block)
                after = block.id
            }
            if rows.count < Self.blocksPerPage { return }
        }
    }
}
