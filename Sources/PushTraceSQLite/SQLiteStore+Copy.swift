import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
    /// The whole store, in one read transaction (one snapshot), a page at a time. A running server keeps the
    /// summaries of what it stored last in memory a moment before writing them: the copy is refused while one runs
    /// (a dead one's were written when this store was opened), and a server started meanwhile writes at once.
    public func copyOut(_ part: (CopiedPart) throws -> Void) throws {
        let copied: Void? = try withoutLiveBacklog {
            try pool.read { db in
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM bundle INDEXED BY bundle_unsummarized WHERE summarized = 0)")! {
                    throw StoreError.copySourceBusy(path)
                }
                try SQLiteSession(db: db).copyOut(layout: .sqlite, dictionary: { [dictionaries] in dictionaries.lookup($0, in: db) }, part)
            }
        }
        if copied == nil { throw StoreError.copySourceBusy(path) }
    }

    public func makeCopyTarget() throws -> any StoreCopyTarget {
        if let table = try pool.read({ try SQLiteSession(db: $0).firstNonEmptyCopiedTable() }) {
            throw StoreError.copyTargetNotEmpty(path, table: table)
        }
        return SQLiteCopyTarget(pool: pool)
    }
}

/// Writes a copy into an empty SQLite store, a part to a transaction. A bundle's blocks are given a contiguous run
/// of ids (how this engine finds them), and their index entries follow them.
final class SQLiteCopyTarget: StoreCopyTarget {
    private let pool: DatabasePool
    private let clients = Clients()

    init(pool: DatabasePool) {
        self.pool = pool
    }

    func copy(_ parts: ((CopiedPart) throws -> Void) throws -> Void) throws -> CopyFinish {
        try parts(write)
        return CopyFinish(counts: try pool.read { try SQLiteSession(db: $0).copiedCounts() })
    }

    private func write(_ part: CopiedPart) throws {
        try pool.write { db in
            try SQLiteSession(db: db).writeCopied(part) { bundles in
                for bundle in bundles { try insert(bundle, db) }
            }
        }
    }

    private func insert(_ bundle: CopiedBundle, _ db: Database) throws {
        let client = try clients.reference(Clients.Description(bundle), db: db)
        try db.cachedStatement(
            sql: """
                INSERT INTO bundle (app_id, bundle_id, device_id, client_ref, uploaded_at, received_at, clock_offset_ms, source,
                                    accepted, rejected, pruned_at, ts_from, ts_to, config_ts_from, config_ts_to)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            bundle.appID, bundle.bundleID, bundle.deviceID, client, bundle.uploadedAt, bundle.receivedAt,
            bundle.clockOffsetMs, bundle.source, bundle.accepted, bundle.rejected, bundle.prunedAt,
            bundle.tsFrom, bundle.tsTo, bundle.configTsFrom, bundle.configTsTo,
        ])
        let bundleRef = db.lastInsertedRowID
        var first: Int64?, last: Int64?
        let block = try db.cachedStatement(
            sql: """
                INSERT INTO record_block (bundle_ref, lines, raw_bytes, dictionary, data) VALUES (?, ?, ?, ?, ?)
                """)
        let index = try db.cachedStatement(sql: "INSERT OR IGNORE INTO notification_block (key, block) VALUES (?, ?)")
        for copied in bundle.blocks {
            try block.execute(arguments: [bundleRef, copied.lines, copied.rawBytes, copied.dictionary, Data(copied.data)])
            let id = db.lastInsertedRowID
            if first == nil { first = id }
            last = id
            for key in copied.keys { try index.execute(arguments: [key, id]) }
        }
        if let first, let last {
            try db.execute(sql: "UPDATE bundle SET first_block = ?, last_block = ? WHERE id = ?", arguments: [first, last, bundleRef])
        }
        let rejected = try db.cachedStatement(sql: "INSERT INTO rejected_line (bundle_ref, line, reason, raw) VALUES (?, ?, ?, ?)")
        for line in bundle.rejectedLines {
            try rejected.execute(arguments: [bundleRef, line.line, line.reason, Data(line.raw)])
        }
    }
}
