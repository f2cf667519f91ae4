import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// Reads what the diagnosis of one notification needs (``DiagnosisAssembly``): its summary, or its events, the config
/// in force, and its device's latest upload.
struct DiagnosisReader: DiagnosisSource {
    let db: Database
    private let blocks: BlockReader
    /// The config in force per device and process, with its span: a device's notifications share it.
    private let spans = ConfigSpans()

    init(_ db: Database, dictionaries: DictionaryCache) {
        self.db = db
        blocks = BlockReader(db: db, dictionaries: dictionaries)
    }

    func input(appID: String, notificationID: String) throws -> DiagnosisInput {
        let lines = try blocks.lines(appID: appID, notificationID: notificationID)
        return try DiagnosisAssembly.input(
            appID: appID, notificationID: notificationID, lines: lines, cut: blocks.cut,
            configs: { try configs(appID: appID, deviceID: $0, at: $1) },
            lastSeen: { try lastSeen(appID: appID, deviceID: $0) },
            neighbours: { try neighbours(appID: appID, deviceID: $0, sentAfter: $1) })
    }

    var neighbourSession: SQLiteSession { SQLiteSession(db: db) }

    func lastSeen(appID: String, deviceID: String) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT last_seen FROM device WHERE app_id = ? AND device_id = ?"),
            arguments: [appID, deviceID])
    }

    func lines(of keys: [NotificationRowKey]) throws -> [[StoredLine]] {
        try keys.map { try blocks.lines(appID: $0.appID, notificationID: $0.notificationID) }
    }

    /// The notification's records of one type (`event`, `log`), in time order.
    func entries(appID: String, notificationID: String, type: String) throws -> [TimelineEntry] {
        DiagnosisAssembly.entries(try blocks.lines(appID: appID, notificationID: notificationID), type: type)
    }

    /// The config record of each process in force at `at`: the latest at or before it, with the time of the next
    /// one (``ConfigSpans``), one indexed step each.
    func configs(appID: String, deviceID: String, at: Int64) throws -> [ProcessKind: StoredConfig] {
        let (db, dictionaries) = (db, blocks.dictionaries)
        let statement = try db.cachedStatement(
            sql: """
                SELECT * FROM (
                    SELECT c.ts, c.device_ts, c.device_id, b.body FROM config c JOIN config_body b ON b.id = c.body_ref
                    WHERE c.app_id = ?1 AND c.device_id = ?2 AND c.process = ?3 AND c.ts <= ?4 ORDER BY c.ts DESC LIMIT 1)
                UNION ALL
                SELECT * FROM (
                    SELECT ts, NULL, NULL, NULL FROM config
                    WHERE app_id = ?1 AND device_id = ?2 AND process = ?3 AND ts > ?4 ORDER BY ts LIMIT 1)
                """)
        var found: [ProcessKind: StoredConfig] = [:]
        for process in DiagnosisAssembly.configuredProcesses {
            found[process] = try spans.config(appID: appID, deviceID: deviceID, process: process, at: at) {
                var config: StoredConfig?
                var next: Int64?
                for row in try Row.fetchAll(statement, arguments: [appID, deviceID, process.rawValue, at]) {
                    let (ts, deviceTs, device, body): (Int64, Int64?, String?, DatabaseValue) = (row[0], row[1], row[2], row[3])
                    guard ts <= at else {
                        next = ts
                        continue
                    }
                    config = StoredConfig(ts: ts) {
                        try DiagnosisAssembly.configEntry(
                            ts: ts, deviceTs: deviceTs, deviceID: device,
                            body: ConfigBody.text(body, dictionaries: dictionaries, db: db))
                    }
                }
                return ConfigSpan(config: config, next: next)
            }
        }
        return found
    }
}
