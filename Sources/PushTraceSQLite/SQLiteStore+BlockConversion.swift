import GRDB
import PushTraceStore

extension SQLiteStore {
    /// The most records one conversion transaction moves: the writer is held for a short while at a time, and a
    /// kill loses at most one uncommitted batch, which the next open converts again.
    static let recordsPerConversionTransaction = 20_000

    /// Moves the rows of `record`, the per-record table stores written before record blocks kept, into blocks,
    /// bundle by bundle, in bounded transactions; then drops the emptied table. Each transaction converts whole
    /// bundles and deletes their rows, so a process killed midway leaves every bundle either converted or not, and
    /// the next open goes on from there. Every stored line keeps its bytes and order, so every answer read from it
    /// stays the same. `progress` returning false stops after that transaction, as a kill would (then the table
    /// stays, and the next open goes on).
    static func convertRecordsToBlocks(
        _ pool: DatabasePool, recordsPerTransaction: Int = recordsPerConversionTransaction,
        progress: ((ConversionProgress) -> Bool)?
    ) throws {
        let hasRecordTable = try pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record')")!
        }
        guard hasRecordTable else { return }
        var done = ConversionProgress()
        done.totalBundles = try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM bundle INDEXED BY bundle_unconverted WHERE first_record IS NOT NULL")!
        }
        if done.totalBundles > 0, progress?(done) == false { return }
        let current = BlockDictionaries(layout: .sqlite)
        while true {
            let moved = try pool.writeWithoutTransaction { db in
                var moved = (bundles: 0, records: 0)
                try db.inTransaction(.immediate) {
                    // Read again inside the write lock: another process may be converting the same store, and may
                    // have finished (and dropped the table).
                    guard
                        try Bool.fetchOne(
                            db,
                            sql: """
                                SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record')
                                """)!
                    else { return .commit }
                    let bundles = try Row.fetchAll(
                        db,
                        sql: """
                            SELECT id, app_id, first_record, last_record FROM bundle INDEXED BY bundle_unconverted
                            WHERE first_record IS NOT NULL ORDER BY id LIMIT 1000
                            """)
                    var dictionaries = try TransactionDictionaries(current, SQLiteSession(db: db))
                    for bundle in bundles where moved.records < recordsPerTransaction || moved.bundles == 0 {
                        let id: Int64 = bundle[0], appID: String = bundle[1], first: Int64 = bundle[2], last: Int64 = bundle[3]
                        var blocks = BlockBuilder(dictionary: try dictionaries.current(for: appID))
                        blocks.bundleRef = id
                        let rows = try Row.fetchCursor(
                            db,
                            sql: """
                                SELECT body, notification_id FROM record WHERE id BETWEEN ? AND ? ORDER BY id
                                """, arguments: [first, last])
                        while let row = try rows.next() {
                            try blocks.add(row[0], notificationID: row[1], appID: appID, db: db)
                            moved.records += 1
                        }
                        try blocks.flush(db)
                        try db.execute(sql: "DELETE FROM record WHERE id BETWEEN ? AND ?", arguments: [first, last])
                        try db.execute(
                            sql: """
                                UPDATE bundle SET first_block = ?, last_block = ?, first_record = NULL, last_record = NULL
                                WHERE id = ?
                                """, arguments: [blocks.first, blocks.last, id])
                        moved.bundles += 1
                        try dictionaries.trainIfDue(appID: appID, added: blocks.storedBytes)
                    }
                    return .commit
                }
                return moved
            }
            guard moved.bundles > 0 else { break }
            done.bundles += moved.bundles
            done.records += moved.records
            if progress?(done) == false { return }
        }
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                // Rows no bundle range covers are not dropped with the table: none are written, but if any are
                // there, the table stays for `pushtrace sql` to find them. Another process converting the same
                // store may have dropped it already.
                let stillThere = try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record')
                        """)!
                if stillThere, try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM record)")! {
                    try db.execute(sql: "DROP TABLE record")
                }
                return .commit
            }
        }
    }
}
