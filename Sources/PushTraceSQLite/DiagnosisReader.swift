import Foundation
import PushTraceStore
import GRDB
import PushTraceCore
import PushTraceRecords

/// Reads what the diagnosis of one notification needs: its events, the config in force, and its device's
/// latest upload.
struct DiagnosisReader {
    let db: Database
    private let blocks: BlockReader
    /// Config records per app, device and process, newest last: a device's notifications share them.
    private let configs = ConfigCache()

    init(_ db: Database, dictionaries: DictionaryCache) {
        self.db = db
        blocks = BlockReader(db: db, dictionaries: dictionaries)
    }

    func input(appID: String, notificationID: String) throws -> DiagnosisInput {
        let entries = try self.entries(appID: appID, notificationID: notificationID, type: "event")
        let deviceID = entries.first(where: { $0.deviceID != nil })?.deviceID
            ?? entries.first(where: { $0.event == .pushSent })?.record.deviceID
        var config = ConfigInForce()
        var lastSeen: Int64?
        if let deviceID, let first = entries.first?.ts {
            config.app = try self.config(appID: appID, deviceID: deviceID, process: .app, at: first)
            config.service = try self.config(appID: appID, deviceID: deviceID, process: .service, at: first)
            config.content = try self.config(appID: appID, deviceID: deviceID, process: .content, at: first)
            lastSeen = try Int64.fetchOne(db.cachedStatement(sql: "SELECT last_seen FROM device WHERE app_id = ? AND device_id = ?"),
                                          arguments: [appID, deviceID])
        }
        return DiagnosisInput(appID: appID, notificationID: notificationID, entries: entries, config: config,
                              deviceLastSeen: lastSeen)
    }

    /// The notification's records of one type (`event`, `log`), in time order.
    func entries(appID: String, notificationID: String, type: String) throws -> [TimelineEntry] {
        // Ordered as the store always has: by corrected time (none first), then as stored.
        try blocks.lines(appID: appID, notificationID: notificationID)
            .filter { $0.record.type == type }
            .sorted { ($0.ts ?? .min, $0.block, $0.index) < ($1.ts ?? .min, $1.block, $1.index) }
            .map { TimelineEntry(ts: $0.ts ?? 0, deviceTs: $0.deviceTs, deviceID: $0.deviceID, record: $0.record, json: $0.body) }
    }

    private func config(appID: String, deviceID: String, process: ProcessKind, at ts: Int64) throws -> TimelineEntry? {
        let key = [appID, deviceID, process.rawValue]
        let all: [TimelineEntry]
        if let cached = configs.entries[key] {
            all = cached
        } else {
            all = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT c.ts, c.device_ts, c.device_id, b.body FROM config c JOIN config_body b ON b.id = c.body_ref
                WHERE c.app_id = ? AND c.device_id = ? AND c.process = ? ORDER BY c.ts
                """), arguments: [appID, deviceID, process.rawValue]).map(entry)
            if configs.entries.count > 10_000 { configs.entries.removeAll(keepingCapacity: true) }
            configs.entries[key] = all
        }
        return all.last { $0.ts <= ts }
    }

    private func entry(_ row: Row) throws -> TimelineEntry {
        var body = try ConfigBody.text(row[3] as DatabaseValue, dictionaries: blocks.dictionaries, db: db)
        let record = try Self.record(storedBody: &body)
        return TimelineEntry(ts: row[0] ?? 0, deviceTs: row[1], deviceID: row[2], record: record, json: body)
    }
}

extension DiagnosisReader {
    /// A stored record body read back (``StoredRecord/record(storedBody:)``); a body that is not a JSON object is
    /// a damaged store.
    static func record(storedBody body: inout String) throws -> PushTraceRecords.Record {
        guard let record = StoredRecord.record(storedBody: &body) else { throw notAnObject }
        return record
    }

    /// What reading a damaged stored line back throws.
    static let notAnObject = DatabaseError(message: "a stored record body is not a JSON object")
}

/// A reader's memo of config records (one reader is used by one thread at a time).
private final class ConfigCache {
    var entries: [[String]: [TimelineEntry]] = [:]
}
