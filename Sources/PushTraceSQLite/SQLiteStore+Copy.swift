import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
    /// How many bundles (with their blocks) and rows one part of a copy holds.
    static let bundlesPerCopiedPage = 64
    static let rowsPerCopiedPage = 1_000

    /// The whole store, in one read transaction (one snapshot), a page at a time. A running server keeps the
    /// summaries of what it stored last in memory a moment before writing them: the copy is refused while one runs
    /// (a dead one's were written when this store was opened), and a server started meanwhile writes at once.
    public func copyOut(_ part: (CopiedPart) throws -> Void) throws {
        let copied: Void? = try withoutLiveBacklog { try pool.read { db in try copyOut(db, part) } }
        if copied == nil { throw StoreCopyError.sourceBusy(path) }
    }

    private func copyOut(_ db: Database, _ part: (CopiedPart) throws -> Void) throws {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM bundle INDEXED BY bundle_unsummarized WHERE summarized = 0)")! {
            throw StoreCopyError.sourceBusy(path)
        }
        try SQLiteSession(db: db).copyOutLeading(
            dictionary: { [dictionaries] in dictionaries.lookup($0, in: db) }, pageSize: Self.rowsPerCopiedPage, part)
        try copyBundles(db, part)
        for table in StoreCopy.tables {
            let rows = try Row.fetchCursor(db, sql: "SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name)")
            var page: [[QueryValue]] = []
            while let row = try rows.next() {
                page.append(row.databaseValues.map(QueryValue.init))
                if page.count == Self.rowsPerCopiedPage {
                    try part(.rows(table, page))
                    page.removeAll(keepingCapacity: true)
                }
            }
            if !page.isEmpty { try part(.rows(table, page)) }
        }
        try part(.counts(SQLiteSession(db: db).copiedCounts()))
    }

    /// Bundles in the order stored, each with its blocks (a contiguous run of ids) and rejected lines.
    private func copyBundles(_ db: Database, _ part: (CopiedPart) throws -> Void) throws {
        let reader = StoredLineReader { [dictionaries] in dictionaries.lookup($0, in: db) }
        let blocks = try db.makeStatement(
            sql: """
                SELECT id, lines, raw_bytes, dictionary, data FROM record_block WHERE id BETWEEN ? AND ? AND bundle_ref = ? ORDER BY id
                """)
        let rejected = try db.makeStatement(sql: "SELECT line, reason, raw FROM rejected_line WHERE bundle_ref = ? ORDER BY id")
        var after: Int64 = 0
        while true {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT u.id, u.app_id, u.bundle_id, u.device_id, c.app_version, c.build, c.os, c.device_model, c.sdk,
                           u.uploaded_at, u.received_at, u.clock_offset_ms, u.source, u.accepted, u.rejected, u.pruned_at,
                           u.ts_from, u.ts_to, u.config_ts_from, u.config_ts_to, u.first_block, u.last_block
                    FROM bundle u LEFT JOIN client c ON c.id = u.client_ref WHERE u.id > ? ORDER BY u.id LIMIT ?
                    """, arguments: [after, Self.bundlesPerCopiedPage])
            guard let last = rows.last else { return }
            after = last[0]
            var page: [CopiedBundle] = []
            var bytes = 0
            for row in rows {
                var bundle = CopiedBundle(appID: row[1], bundleID: row[2], receivedAt: row[10], clockOffsetMs: row[11])
                bundle.deviceID = row[3]
                (bundle.appVersion, bundle.build, bundle.os, bundle.deviceModel, bundle.sdk) = (row[4], row[5], row[6], row[7], row[8])
                bundle.uploadedAt = row[9]
                bundle.source = row[12]
                (bundle.accepted, bundle.rejected, bundle.prunedAt) = (row[13], row[14], row[15])
                (bundle.tsFrom, bundle.tsTo, bundle.configTsFrom, bundle.configTsTo) = (row[16], row[17], row[18], row[19])
                if let first: Int64 = row[20], let lastBlock: Int64 = row[21] {
                    let id: Int64 = row[0]
                    for block in try Row.fetchAll(blocks, arguments: [first, lastBlock, id]) {
                        let data = [UInt8](block[4] as Data)
                        let stored = StoredBlockRow(
                            id: block[0], lines: block[1], rawBytes: block[2], data: data,
                            appID: bundle.appID, deviceID: bundle.deviceID,
                            clockOffsetMs: bundle.clockOffsetMs)
                        bundle.blocks.append(
                            CopiedBlock(
                                id: block[0], lines: block[1], rawBytes: block[2], dictionary: block[3],
                                data: data, keys: CopiedBlock.keys(of: stored, reader: reader)))
                        bytes += data.count
                    }
                }
                bundle.rejectedLines = try Row.fetchAll(rejected, arguments: [row[0]]).map {
                    CopiedRejectedLine(line: $0[0], reason: $0[1], raw: [UInt8]($0[2] as Data))
                }
                page.append(bundle)
                if bytes >= StoreCopy.bytesPerPage {
                    try part(.bundles(page))
                    page.removeAll()
                    bytes = 0
                }
            }
            if !page.isEmpty { try part(.bundles(page)) }
        }
    }

    public func makeCopyTarget() throws -> any StoreCopyTarget {
        try pool.read { db in
            for table in StoreCopy.countedTables where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table))")! {
                throw StoreCopyError.targetNotEmpty(path, table: table)
            }
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

extension QueryValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let integer): integer.databaseValue
        case .real(let real): real.databaseValue
        case .text(let text): text.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }
}
