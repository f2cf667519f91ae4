import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    public func appIDs() throws -> [String] {
        try reading { try AppRows.all($0) }
    }

    public func apps(forNotification id: String) throws -> [String] {
        try reading { try AppRows.storing(notification: NotificationKey.normalize(id), $0) }
    }

    /// A why is read with two statements (``PostgresDiagnosisReader/input(appID:notificationID:)``): the blocks and
    /// last-seen times, then the config in force, which the first event's time picks; a config record committed in
    /// between may be taken, as it would by a why a moment later. A notification whose device none of its bundles
    /// names (a `push.sent` alone) is read again in one read-only transaction, statement by statement.
    public func why(appID: String, notificationID: String) throws -> WhyReport {
        let key = NotificationKey.normalize(notificationID)
        // On the same connection either way: a session whose work threw is closed, and a new connection costs more
        // than the why.
        let input = try withSession { session in
            let reader = PostgresDiagnosisReader(session, store: self)
            if let input = try reader.input(appID: appID, notificationID: key) { return input }
            return try session.transaction("ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let lines = try reader.lines(appID: appID, notificationID: key)
                return try reader.input(appID: appID, notificationID: key, lines: lines, cut: reader.cut)
            }
        }
        return WhyReport(input: input, diagnosis: Diagnoser(settings: settings).diagnose(input))
    }

    /// One statement, so one snapshot without a transaction around it.
    public func logs(appID: String, notificationID: String) throws -> [TimelineEntry] {
        let key = NotificationKey.normalize(notificationID)
        return try withSession { session in
            DiagnosisAssembly.entries(
                try PostgresDiagnosisReader(session, store: self).lines(appID: appID, notificationID: key),
                type: "log")
        }
    }

    public func search(_ query: SearchQuery) throws -> [NotificationSummary] {
        try reading { try $0.search(query) }
    }

    public func causeCounts(since: Int64) throws -> [CauseCount] {
        try reading { try $0.causeCounts(since: since) }
    }

    public func latestConfiguration(appID: String) throws -> AppConfiguration? {
        try reading { session in
            try ConfigurationReading.latest(appID: appID, session) { [dictionaries] in dictionaries.lookup($0, session) }
        }
    }

    /// A config body's line.
    func configText(_ body: ByteBuffer, _ session: PostgresSession) throws -> String {
        try ConfigBody.text(compressed: Array(body.readableBytesView)) { dictionaries.lookup($0, session) }
    }

    /// The columns ``blockRow(_:)`` reads, for a query over `record_block b JOIN bundle u`.
    static let blockColumns = "b.id, b.lines, b.raw_bytes, b.data, u.app_id, u.device_id, u.clock_offset_ms"

    /// A row selected with ``blockColumns``.
    static func blockRow(_ row: PostgresRow) throws -> StoredBlockRow {
        let (id, lines, rawBytes, data, appID, deviceID, offset) =
            try row.decode((Int64, Int64, Int64, ByteBuffer, String, String?, Int64).self)
        return StoredBlockRow(
            id: id, lines: Int(lines), rawBytes: Int(rawBytes), data: Array(data.readableBytesView),
            appID: appID, deviceID: deviceID, clockOffsetMs: offset)
    }
}

/// Reads what the diagnosis of a notification needs (``DiagnosisAssembly``): with one statement, or with several in
/// the caller's transaction.
struct PostgresDiagnosisReader: DiagnosisSource {
    /// The lines name a device that none of the notification's bundles does: its records were not read with them.
    private struct OtherDevice: Error {}

    let session: PostgresSession
    let store: PostgresStore
    private let reader: StoredLineReader
    /// The config in force per device and process, with its span: a device's notifications share it.
    private let spans = ConfigSpans()

    init(_ session: PostgresSession, store: PostgresStore) {
        self.session = session
        self.store = store
        reader = StoredLineReader { [dictionaries = store.dictionaries] in dictionaries.lookup($0, session) }
    }

    /// What one notification's diagnosis needs: its blocks and the last-seen time of the devices whose bundles hold
    /// them, read with one statement; then the config in force (``ConfigInForceStatement``), which only the first
    /// event's time picks. Nil when the lines name a device no such bundle has (a `push.sent` alone names one): read
    /// in a transaction then (``PostgresStore/why``).
    func input(appID: String, notificationID: String) throws -> DiagnosisInput? {
        let rows = try session.query(
            DiagnosisStatement(
                key: NotificationBlockKey.of(appID: appID, notificationID: notificationID), appID: appID))
        var blocks: [StoredBlockRow] = []
        var devices = Set<String>()
        var lastSeen: [String: Int64] = [:]
        for row in rows {
            let c = row.makeRandomAccess()
            let device = try c[5].decode(String?.self)
            if let device { devices.insert(device) }
            if try c[0].decode(Int32.self) == 0 {
                blocks.append(
                    StoredBlockRow(
                        id: try c[1].decode(Int64.self), lines: Int(try c[2].decode(Int64.self)),
                        rawBytes: Int(try c[3].decode(Int64.self)), data: Array(try c[4].decode(ByteBuffer.self).readableBytesView),
                        appID: appID, deviceID: device, clockOffsetMs: try c[6].decode(Int64.self)))
            } else if let device {
                lastSeen[device] = try c[6].decode(Int64.self)
            }
        }
        let lines = try reader.lines(appID: appID, notificationID: notificationID) { each in
            for block in blocks { try each(block) }
        }
        do {
            return try DiagnosisAssembly.input(
                appID: appID, notificationID: notificationID, lines: lines, cut: reader.cut,
                configs: { try configs(appID: appID, deviceID: $0, at: $1) },
                lastSeen: { device in
                    guard devices.contains(device) else { throw OtherDevice() }
                    return lastSeen[device]
                },
                neighbours: { try neighbours(appID: appID, deviceID: $0, sentAfter: $1) })
        } catch is OtherDevice {
            return nil
        }
    }

    /// Where the reader's last read of one notification's lines stopped at its limits; nil when it read them all.
    var cut: TimelineCut? { reader.cut }

    func input(appID: String, notificationID: String, lines: [StoredLine], cut: TimelineCut? = nil) throws -> DiagnosisInput {
        try DiagnosisAssembly.input(
            appID: appID, notificationID: notificationID, lines: lines, cut: cut,
            configs: { try configs(appID: appID, deviceID: $0, at: $1) },
            lastSeen: { try lastSeen(appID: appID, deviceID: $0) },
            neighbours: { try neighbours(appID: appID, deviceID: $0, sentAfter: $1) })
    }

    var neighbourSession: PostgresSession { session }

    func lastSeen(appID: String, deviceID: String) throws -> Int64? {
        try session.query("SELECT last_seen FROM device WHERE app_id = \(appID) AND device_id = \(deviceID)")
            .first(where: { _ in true })?.decode(Int64.self)
    }

    /// The stored lines of one app's notification, in the order they were stored.
    func lines(appID: String, notificationID: String) throws -> [StoredLine] {
        let key = NotificationBlockKey.of(appID: appID, notificationID: notificationID)
        let rows = try session.query(
            """
            SELECT \(unescaped: PostgresStore.blockColumns) FROM notification_block n
            JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
            WHERE n.key = \(key) AND u.app_id = \(appID) ORDER BY b.id LIMIT \(Int64(StoredLineReader.blockLimit + 1))
            """)
        return try reader.lines(appID: appID, notificationID: notificationID) { each in
            for row in rows { try each(try PostgresStore.blockRow(row)) }
        }
    }

    /// The lines of many notifications of their blocks, read with one query: what settling a batch needs, each
    /// notification's blocks up to the reader's limit (``StoredLineReader/blockLimit``).
    func lines(of keys: [NotificationRowKey]) throws -> [[StoredLine]] {
        guard !keys.isEmpty else { return [] }
        let hashes = Array(Set(keys.map { NotificationBlockKey.of(appID: $0.appID, notificationID: $0.notificationID) }))
        var blocksByKey: [Int64: [StoredBlockRow]] = [:]
        for row in try session.query(
            """
            SELECT k.key, \(unescaped: PostgresStore.blockColumns) FROM unnest(\(hashes)::bigint[]) AS k(key)
            CROSS JOIN LATERAL (
                SELECT n.block FROM notification_block n WHERE n.key = k.key
                ORDER BY n.block LIMIT \(Int64(StoredLineReader.blockLimit + 1))
            ) n
            JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
            ORDER BY b.id
            """)
        {
            let c = row.makeRandomAccess()
            let key = try c[0].decode(Int64.self)
            let (id, lines, rawBytes, data) = (
                try c[1].decode(Int64.self), try c[2].decode(Int64.self),
                try c[3].decode(Int64.self), try c[4].decode(ByteBuffer.self)
            )
            blocksByKey[key, default: []].append(
                StoredBlockRow(
                    id: id, lines: Int(lines), rawBytes: Int(rawBytes), data: Array(data.readableBytesView),
                    appID: try c[5].decode(String.self), deviceID: try c[6].decode(String?.self),
                    clockOffsetMs: try c[7].decode(Int64.self)))
        }
        return try keys.map { key in
            let blocks = blocksByKey[NotificationBlockKey.of(appID: key.appID, notificationID: key.notificationID)] ?? []
            return try reader.lines(appID: key.appID, notificationID: key.notificationID) { each in
                for block in blocks { try each(block) }
            }
        }
    }

    /// The config record of each process in force at `at`: the latest at or before it, with the time of the next
    /// one (``ConfigSpans``: a device's notifications settled together share them), in one statement.
    func configs(appID: String, deviceID: String, at: Int64) throws -> [ProcessKind: StoredConfig] {
        let processes = DiagnosisAssembly.configuredProcesses
        var found: [ProcessKind: StoredConfig] = [:]
        let known = processes.compactMap { spans.span(appID: appID, deviceID: deviceID, process: $0, at: at) }
        guard known.count < processes.count else {
            for (process, span) in zip(processes, known) { found[process] = span.config }
            return found
        }
        for row in try session.query(ConfigInForceStatement(appID: appID, deviceID: deviceID, at: at)) {
            let (process, ts, deviceTs, body, next) = try row.decode((String, Int64?, Int64?, ByteBuffer?, Int64?).self)
            guard let kind = ProcessKind(rawValue: process) else { continue }
            var config: StoredConfig?
            if let ts, let body { config = self.config(ts: ts, deviceTs: deviceTs, deviceID: deviceID, body: body) }
            spans.remember(ConfigSpan(config: config, next: next), appID: appID, deviceID: deviceID, process: kind)
            found[kind] = config
        }
        return found
    }

    /// A config record, its body decoded only if a diagnosis takes it.
    private func config(ts: Int64, deviceTs: Int64?, deviceID: String, body: ByteBuffer) -> StoredConfig {
        StoredConfig(ts: ts) { [store, session] in
            try DiagnosisAssembly.configEntry(
                ts: ts, deviceTs: deviceTs, deviceID: deviceID,
                body: store.configText(body, session))
        }
    }
}

/// The statement a why reads first (``PostgresDiagnosisReader/input(appID:notificationID:)``), prepared: it runs for
/// every why, and planning it anew each time would cost more than running it. Part 0: a notification's blocks, by
/// id, up to the reader's limit. Part 1: the last-seen times of the devices whose bundles hold them.
private struct DiagnosisStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static let name = "pushtrace_diagnosis"
    static let sql = """
        WITH blk AS (
            SELECT b.id, b.lines, b.raw_bytes, b.data, u.device_id, u.clock_offset_ms FROM notification_block n
            JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
            WHERE n.key = $1::bigint AND u.app_id = $2::text ORDER BY b.id LIMIT \(StoredLineReader.blockLimit + 1)
        ), dev AS (SELECT DISTINCT device_id FROM blk WHERE device_id IS NOT NULL)
        SELECT 0 AS part, id, lines, raw_bytes, data, device_id, clock_offset_ms AS n1 FROM blk
        UNION ALL
        SELECT 1, NULL, NULL, NULL, NULL, d.device_id, d.last_seen
        FROM dev JOIN device d ON d.app_id = $2::text AND d.device_id = dev.device_id
        ORDER BY part, id, n1
        """
    let key: Int64
    let appID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(key)
        bindings.append(appID)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// The config record of each process in force for a device at a time (the latest at or before it) and the time of
/// the next one, found by descents of the primary key, so that a device with any number of config records costs the
/// same. One row per process, with NULLs where there is none.
private struct ConfigInForceStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static let name = "pushtrace_config_in_force"
    static let sql = """
        SELECT p.process, c.ts, c.device_ts, cb.body,
            (SELECT n.ts FROM config n
             WHERE n.app_id = $1::text AND n.device_id = $2::text AND n.process = p.process AND n.ts > $3::bigint
             ORDER BY n.ts LIMIT 1) AS next
        FROM unnest($4::text[]) AS p(process)
        LEFT JOIN LATERAL (
            SELECT ts, device_ts, body_ref FROM config
            WHERE app_id = $1::text AND device_id = $2::text AND process = p.process AND ts <= $3::bigint
            ORDER BY ts DESC LIMIT 1
        ) c ON true
        LEFT JOIN config_body cb ON cb.id = c.body_ref
        """
    let appID: String
    let deviceID: String
    let at: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(appID)
        bindings.append(deviceID)
        bindings.append(at)
        bindings.append(DiagnosisAssembly.configuredProcesses.map(\.rawValue))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
