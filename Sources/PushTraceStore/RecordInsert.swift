import GRDB
import GRDBSQLite

/// The `INSERT INTO record` of every stored line, bound through SQLite's C API.
///
/// It runs once per record, and GRDB's general path (an array of `DatabaseValue`s, boxed and unboxed per argument)
/// was a third of its cost. Everything else in the store goes through GRDB.
struct RecordInsert {
    private let statement: Statement
    private let db: Database

    init(_ db: Database) throws {
        self.db = db
        statement = try db.cachedStatement(sql: """
            INSERT INTO record (bundle_ref, line, app_id, device_id, type, process, event, notification_id, ts, device_ts, body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
    }

    /// Inserts one record and returns its row ID.
    func callAsFunction(bundleRef: Int64, line: Int, appID: String, deviceID: String?, type: String?, process: String?,
                        event: String?, notificationID: String?, ts: Int64?, deviceTs: Int64?, body: String) throws -> Int64 {
        let handle = statement.sqliteStatement
        sqlite3_bind_int64(handle, 1, bundleRef)
        sqlite3_bind_int64(handle, 2, Int64(line))
        bind(appID, 3)
        bind(deviceID, 4)
        bind(type, 5)
        bind(process, 6)
        bind(event, 7)
        bind(notificationID, 8)
        bind(ts, 9)
        bind(deviceTs, 10)
        bind(body, 11)
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
        }
        return sqlite3_last_insert_rowid(db.sqliteConnection)
    }

    private func bind(_ value: Int64?, _ index: Int32) {
        if let value { sqlite3_bind_int64(statement.sqliteStatement, index, value) } else {
            sqlite3_bind_null(statement.sqliteStatement, index)
        }
    }

    private func bind(_ value: String?, _ index: Int32) {
        guard var value else {
            sqlite3_bind_null(statement.sqliteStatement, index)
            return
        }
        // SQLITE_TRANSIENT: SQLite copies the bytes before this returns.
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement.sqliteStatement, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  Int32(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    }
}
