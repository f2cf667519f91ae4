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
                guard let ts = StoredRecord.timestamp(storedBody: &text) else { throw DiagnosisReader.notAnObject }
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
