import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// Reads record blocks back as ``StoredLine``s (``StoredLineReader``) from SQLite rows.
struct BlockReader {
    let db: Database
    let dictionaries: DictionaryCache
    private let reader: StoredLineReader

    init(db: Database, dictionaries: DictionaryCache) {
        self.db = db
        self.dictionaries = dictionaries
        reader = StoredLineReader { identifier in dictionaries.lookup(identifier, in: db) }
    }

    /// The columns ``row(_:)`` reads, for a query over `record_block b JOIN bundle u`.
    static let columns = "b.id, b.lines, b.raw_bytes, b.data, u.app_id, u.device_id, u.clock_offset_ms"

    /// A row selected with ``columns``.
    static func row(_ row: Row) -> StoredBlockRow {
        let data: Data = row[3]
        return StoredBlockRow(
            id: row[0], lines: row[1], rawBytes: row[2], data: [UInt8](data), appID: row[4],
            deviceID: row[5], clockOffsetMs: row[6])
    }

    /// The lines of the blocks `statement` selects (with ``columns``), one block at a time, in the order it gives.
    func forEachLine(_ statement: Statement, arguments: StatementArguments, _ body: (StoredLine) throws -> Void) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            try reader.forEachLine(of: Self.row(row), body)
        }
    }

    /// The lines of the blocks `statement` selects (with ``columns``), each with its corrected time and nothing else
    /// read from it: what an export needs.
    func forEachLineTime(
        _ statement: Statement, arguments: StatementArguments,
        _ body: (_ line: String, _ correctedTs: Int64?) throws -> Void
    ) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            try reader.forEachLineTime(of: Self.row(row), body)
        }
    }

    /// The lines of one block row (``columns``).
    func lines(of row: Row, mentioning: [UInt8]? = nil, _ body: (StoredLine) throws -> Void) throws {
        try reader.forEachLine(of: Self.row(row), mentioning: mentioning, body)
    }

    /// Where the last ``lines(appID:notificationID:)`` stopped at the reader's limits; nil when it read every block.
    var cut: TimelineCut? { reader.cut }

    /// The stored lines of one app's notification, in the order they were stored, up to the reader's limits
    /// (``StoredLineReader/blockLimit``; one block more is asked for, to know there are more).
    func lines(appID: String, notificationID: String) throws -> [StoredLine] {
        let key = NotificationBlockKey.of(appID: appID, notificationID: notificationID)
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(Self.columns) FROM notification_block n
                JOIN record_block b ON b.id = n.block JOIN bundle u ON u.id = b.bundle_ref
                WHERE n.key = ? AND u.app_id = ? ORDER BY b.id LIMIT \(StoredLineReader.blockLimit + 1)
                """)
        return try reader.lines(appID: appID, notificationID: notificationID) { each in
            let rows = try Row.fetchCursor(statement, arguments: [key, appID])
            while let row = try rows.next() { try each(Self.row(row)) }
        }
    }
}
