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
    /// With `mentioning` (a notification ID, folded by ``BlockMentions/folded(_:)``), only the lines that may be that
    /// notification's are parsed; the caller still checks each line's parsed ID.
    func forEachLine(_ statement: Statement, arguments: StatementArguments, mentioning: [UInt8]? = nil,
                     _ body: (StoredLine) throws -> Void) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            try lines(of: row, mentioning: mentioning, body)
        }
    }

    /// The lines of the blocks `statement` selects (with ``columns``), each with its corrected time and nothing else
    /// read from it: what an export needs.
    func forEachLineTime(_ statement: Statement, arguments: StatementArguments,
                         _ body: (_ line: String, _ correctedTs: Int64?) throws -> Void) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            let offset: Int64 = row[6]
            for var text in try decode(row) {
                let ts: Int64?
                if let scanned = text.withUTF8({ PushTraceRecords.Record.timestamp(scanning: UnsafeRawBufferPointer($0)) }) {
                    ts = scanned
                } else {
                    ts = try DiagnosisReader.record(storedBody: &text).ts
                }
                try body(text, ts.map { ClockCorrection.corrected($0, by: offset) })
            }
        }
    }

    /// The lines of one block row (``columns``), decompressed.
    private func decode(_ row: Row) throws -> [String] {
        let data: Data = row[3]
        return try RecordBlock.decode([UInt8](data), lines: row[1], rawBytes: row[2]) { identifier in
            dictionaries.lookup(identifier, in: db)
        }
    }

    /// The lines of one block row (``columns``).
    func lines(of row: Row, mentioning: [UInt8]? = nil, _ body: (StoredLine) throws -> Void) throws {
        let block: Int64 = row[0]
        let decoded: DecodedBlock
        if let known = recent.block(block) {
            decoded = known
        } else {
            decoded = DecodedBlock(try decode(row))
            recent.keep(block, decoded)
        }
        let texts = decoded.lines
        let appID: String = row[4], deviceID: String? = row[5], offset: Int64 = row[6]
        let indices = mentioning.map { decoded.mentions.lines(mentioning: $0) } ?? Array(texts.indices)
        for index in indices {
            var text = texts[index]
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
        try forEachLine(db.cachedStatement(sql: """
            SELECT \(Self.columns) FROM notification_block n
            JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
            WHERE n.key = ? AND u.app_id = ? ORDER BY b.id
            """), arguments: [key, appID], mentioning: BlockMentions.folded(Array(notificationID.utf8))) { line in
            // Byte for byte, as the index key and the old SQL compared (not Unicode-equivalence).
            if line.notificationID?.utf8.elementsEqual(notificationID.utf8) == true { found.append(line) }
        }
        return found
    }
}

/// What each line of a decoded block says its notification is, found once per block without parsing, so that
/// reading a notification's lines from a block of many (a backend's `push.sent` lines) parses only its own.
///
/// A line's mention is the value of its one `"notification_id":"…"` (ASCII letters folded to lower case, as a UUID
/// is compared), none when it has no such key, or undecided when only the parser can tell: an escape anywhere, the
/// key spelled otherwise (spaces) or repeated. A line the parser would give the notification is never left out.
struct BlockMentions {
    enum Mention: Equatable {
        case none
        case id([UInt8])
        case undecided
    }

    /// Line indices by a 64-bit hash of the folded ID they name: a candidate list (two IDs may share a hash), which
    /// callers narrow by each line's parsed ID. Hashing the bytes in place spares an array per line.
    private var byID: [UInt64: [Int]] = [:]
    private var undecided: [Int] = []

    init(_ lines: [String]) {
        for (index, line) in lines.enumerated() {
            var line = line
            let found = line.withUTF8 { bytes -> UInt64?? in
                switch Self.value(in: bytes) {
                case .none: return .some(nil)
                case .undecided: return nil
                case .found(let range): return .some(Self.hash(UnsafeBufferPointer(rebasing: bytes[range])))
                }
            }
            switch found {
            case .none: undecided.append(index)
            case .some(nil): break
            case .some(.some(let hash)): byID[hash, default: []].append(index)
            }
        }
    }

    /// The lines that may be notification `folded`'s (see ``folded(_:)``), in order.
    func lines(mentioning folded: [UInt8]) -> [Int] {
        let named = folded.withUnsafeBufferPointer { byID[Self.hash($0)] } ?? []
        return undecided.isEmpty ? named : (named + undecided).sorted()
    }

    /// `id` with ASCII letters in lower case.
    static func folded(_ id: [UInt8]) -> [UInt8] { id.map(fold) }

    private static func fold(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte | 0x20 : byte }

    /// FNV-1a of `bytes` with ASCII letters folded to lower case.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(fold(byte))) &* 0x100_0000_01b3 }
        return hash
    }

    /// Whether `line` may be a record of the notification `needle`.
    static func mayMention(_ line: String, _ needle: [UInt8]) -> Bool {
        switch mention(line) {
        case .none: false
        case .undecided: true
        case .id(let id): id == folded(needle)
        }
    }

    /// What `line` says its notification is.
    static func mention(_ line: String) -> Mention {
        var line = line
        return line.withUTF8 { bytes in
            switch value(in: bytes) {
            case .none: .none
            case .undecided: .undecided
            case .found(let range): .id(folded(Array(bytes[range])))
            }
        }
    }

    private enum Value {
        case none
        case found(Range<Int>)
        case undecided
    }

    /// Where the line's one `"notification_id":"…"` value is, without parsing it.
    private static func value(in bytes: UnsafeBufferPointer<UInt8>) -> Value {
        guard let base = bytes.baseAddress else { return .none }
        if memchr(base, Int32(UInt8(ascii: "\\")), bytes.count) != nil { return .undecided }
        var firstValue: Int?, values = 0
        var from = 0
        while let found = find(key, in: bytes, from: from) {
            if firstValue == nil { firstValue = found + key.count }
            values += 1
            from = found + key.count
        }
        var bareKeys = 0
        from = 0
        while let found = find(bareKey, in: bytes, from: from) {
            bareKeys += 1
            from = found + bareKey.count
        }
        if bareKeys == 0 { return .none }
        guard values == 1, bareKeys == 1, let value = firstValue,
              let end = memchr(base + value, Int32(UInt8(ascii: "\"")), bytes.count - value) else { return .undecided }
        return .found(value..<base.distance(to: end.assumingMemoryBound(to: UInt8.self)))
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

/// A block's lines, and what each mentions once a notification's lines were looked for in it.
final class DecodedBlock {
    let lines: [String]
    private(set) lazy var mentions = BlockMentions(lines)

    init(_ lines: [String]) { self.lines = lines }
}

/// The last blocks one reader decoded, the oldest dropped first (used by one thread at a time). A backend's block
/// of `push.sent` lines holds many notifications, which settling reads in the order they were sent.
private final class RecentBlocks {
    private static let capacity = 128
    private var blocks: [Int64: DecodedBlock] = [:]
    private var order: [Int64] = []

    func block(_ id: Int64) -> DecodedBlock? { blocks[id] }

    func keep(_ id: Int64, _ block: DecodedBlock) {
        if order.count == Self.capacity { blocks[order.removeFirst()] = nil }
        order.append(id)
        blocks[id] = block
    }
}
