import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The store's SQL (``StoreSQL``) over this file: reads are WAL readers beside the one writer, each its own
    /// snapshot, so a read never waits for a write.
    package var sql: StoreSQL<SQLiteSession> {
        StoreSQL(
            layout: .sqlite, dictionaries: dictionaries,
            read: { [pool] body in try pool.read { try body(SQLiteSession(db: $0)) } },
            write: { [pool] body in try pool.write { try body(SQLiteSession(db: $0)) } },
            awaited: { [pool] transaction, body in
                // GRDB's own threads run the body, inline on the connection they lend; the caller awaits it.
                switch transaction {
                case .read, .readOne: try await pool.read { db in try InlineExecutor.run { try await body(SQLiteSession(db: db)) } }
                case .write: try await pool.write { db in try InlineExecutor.run { try await body(SQLiteSession(db: db)) } }
                }
            })
    }
}

extension BlockReading<SQLiteSession> {
    /// The store's block reads on one connection, inside its read or write access.
    init(_ db: Database, dictionaries: BlockDictionaries) {
        self.init(SQLiteSession(db: db)) { dictionaries.lookup($0, in: db) }
    }

    /// The lines of the blocks `statement` selects (with ``columns``), one block at a time, in the order it gives.
    func forEachLine(_ statement: SQLStatement, _ body: (StoredLine) throws -> Void) throws {
        try session.each(statement) { row in try reader.forEachLine(of: Self.block(row), body) }
    }
}

extension BlockDictionaries {
    /// The dictionary a block's header names, read on this connection the first time.
    func lookup(_ identifier: UInt32, in db: Database) -> [UInt8]? { lookup(identifier, SQLiteSession(db: db)) }
}
