import Foundation
import PushTraceStore
import GRDB
import PushTraceCore
import PushTraceRecords

/// One stored line read back from its block, with what is derived from it and its bundle.
struct StoredLine {
    /// The line exactly as received.
    var body: String
    var record: PushTraceRecords.Record
    /// The notification ID in its stored form, when the record has one.
    var notificationID: String?
    /// The line's time corrected by its bundle's clock offset (what the store orders and filters by).
    var ts: Int64?
    /// The device's own time, when the correction changed it.
    var deviceTs: Int64?
    /// The uploading device; nil for the backend's bundles.
    var deviceID: String?
    var appID: String
    /// The block's row id and the line's place in it: the order lines were stored in.
    var block: Int64
    var index: Int
}

/// Reads record blocks back as ``StoredLine``s.
struct BlockReader {
    let db: Database
    let dictionaries: DictionaryCache
    /// The last blocks this reader decoded: a device's notifications share its bundles' blocks, and causes are
    /// settled device by device.
    private let recent = RecentBlocks()

    init(db: Database, dictionaries: DictionaryCache) {
        self.db = db
        self.dictionaries = dictionaries
    }

    /// The columns ``lines(of:only:)`` reads, for a query over `record_block b JOIN bundle u`.
    static let columns = "b.id, b.lines, b.raw_bytes, b.data, u.app_id, u.device_id, u.clock_offset_ms"

    /// The lines of the blocks `statement` selects (with ``columns``), one block at a time, in the order it gives.
    /// `prefilter`, when given, skips lines it refuses before they are parsed.
    func forEachLine(_ statement: Statement, arguments: StatementArguments, prefilter: ((String) -> Bool)? = nil,
                     _ body: (StoredLine) throws -> Void) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            try lines(of: row, prefilter: prefilter, body)
        }
    }

    /// The lines of one block row (``columns``).
    func lines(of row: Row, prefilter: ((String) -> Bool)? = nil, _ body: (StoredLine) throws -> Void) throws {
        let block: Int64 = row[0]
        let texts: [String]
        if let known = recent.lines(of: block) {
            texts = known
        } else {
            let data: Data = row[3]
            texts = try RecordBlock.decode([UInt8](data), lines: row[1], rawBytes: row[2]) { identifier in
                dictionaries.lookup(identifier, in: db)
            }
            recent.keep(block, texts)
        }
        let appID: String = row[4], deviceID: String? = row[5], offset: Int64 = row[6]
        for (index, text) in texts.enumerated() {
            if let prefilter, !prefilter(text) { continue }
            var text = text
            let record = try DiagnosisReader.record(storedBody: &text)
            try body(StoredLine(body: text, record: record, notificationID: record.notificationID.map(NotificationKey.normalize),
                                ts: record.ts.map { ClockCorrection.corrected($0, by: offset) },
                                deviceTs: offset != 0 ? record.ts : nil, deviceID: deviceID, appID: appID,
                                block: block, index: index))
        }
    }

    /// The stored lines of one app's notification, in the order they were stored.
    func lines(appID: String, notificationID: String) throws -> [StoredLine] {
        let key = NotificationBlockKey.of(appID: appID, notificationID: notificationID)
        var found: [StoredLine] = []
        // A line can only be this notification's if its ID is in it; a line with an escape is parsed anyway
        // (its ID may be spelled with one).
        let needle = Array(notificationID.utf8)
        try forEachLine(db.cachedStatement(sql: """
            SELECT \(Self.columns) FROM notification_block n
            JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
            WHERE n.key = ? AND u.app_id = ? ORDER BY b.id
            """), arguments: [key, appID], prefilter: { Self.mayMention($0, needle) }) { line in
            // Byte for byte, as the index key and the old SQL compared (not Unicode-equivalence).
            if line.notificationID?.utf8.elementsEqual(notificationID.utf8) == true { found.append(line) }
        }
        return found
    }

    /// Whether `line` may be a record of the notification `needle`: its `"notification_id":"` is followed by
    /// `needle` (ASCII letters compared without case, as a UUID is). A line that spells the key otherwise (spaces,
    /// an escape) is kept for the parser to judge.
    static func mayMention(_ line: String, _ needle: [UInt8]) -> Bool {
        var line = line
        return line.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !needle.isEmpty else { return true }
            if memchr(base, Int32(UInt8(ascii: "\\")), bytes.count) != nil { return true }
            var from = 0
            var strictKeys = 0
            while let found = find(key, in: bytes, from: from) {
                strictKeys += 1
                let value = found + key.count
                if value + needle.count < bytes.count, bytes[value + needle.count] == UInt8(ascii: "\""),
                   (0..<needle.count).allSatisfy({ bytes[value + $0] | 0x20 == needle[$0] | 0x20 }) {
                    return true
                }
                from = value
            }
            // The key spelled otherwise too (spaces, or a repeated key): only the parser can tell.
            var bareKeys = 0
            from = 0
            while let found = find(bareKey, in: bytes, from: from) {
                bareKeys += 1
                from = found + bareKey.count
            }
            return bareKeys > strictKeys
        }
    }

    /// The offset of the first `pattern` in `bytes` at or after `from`, found by `memchr` on its first byte.
    private static func find(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = pattern.first else { return nil }
        var at = from
        while at + pattern.count <= bytes.count,
              let hit = memchr(base + at, Int32(first), bytes.count - at - pattern.count + 1) {
            let offset = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if pattern.count == 1 || (base[offset + 1] == pattern[1] && memcmp(base + offset, pattern, pattern.count) == 0) {
                return offset
            }
            at = offset + 1
        }
        return nil
    }

    private static let key: [UInt8] = Array(#""notification_id":""#.utf8)
    private static let bareKey: [UInt8] = Array("notification_id".utf8)
}

/// The lines of the last blocks one reader decoded, the oldest dropped first (used by one thread at a time). A
/// backend's block of `push.sent` lines holds many devices' notifications, which settling reads device by device.
private final class RecentBlocks {
    private static let capacity = 128
    private var lines: [Int64: [String]] = [:]
    private var order: [Int64] = []

    func lines(of id: Int64) -> [String]? { lines[id] }

    func keep(_ id: Int64, _ texts: [String]) {
        if order.count == Self.capacity { lines[order.removeFirst()] = nil }
        order.append(id)
        lines[id] = texts
    }
}
