import Foundation
import GRDB
import GRDBSQLite
import PushTraceStore

/// SQLite's words for what differs between the engines.
package struct SQLiteDialect: SQLDialect {
    package init() {}
    package func placeholder(_ index: Int) -> String { "?" }
    package var byteOrder: String { "" }
    package var descendingNullsLast: String { "DESC" }
    package var least: String { "min" }
    package var greatest: String { "max" }
    package var lockedAgainstDelete: String { "" }
    package var rowLock: String? { nil }
    package func rowLockSkippingLocked(of table: String) -> String { "" }
    package func indexedBy(_ index: String) -> String { " INDEXED BY \(index)" }
    package var orFail: String { " OR FAIL" }
    /// SQLite's own sum: an overflow makes it a real, which reads back as the largest integer.
    package func sum(_ a: String, _ b: String) -> String { "\(a) + \(b)" }
    package var rowsPerUpsert: Int { 1 }
    package var keysPerRead: Int { 1 }
}

/// A GRDB connection, inside the engine's read or write access, as the store's SQL session. Statements are cached
/// by their text, as GRDB's `cachedStatement` keeps them for the connection; a long one (a multi-row insert, whose
/// text changes with its row count) is prepared each time rather than kept.
package struct SQLiteSession: SQLSession {
    let db: Database

    package var dialect: SQLiteDialect { SQLiteDialect() }

    package func rows(_ statement: SQLStatement) throws -> [SQLRow] {
        var rows: [SQLRow] = []
        try each(statement) { rows.append($0) }
        return rows
    }

    /// Kept prepared as every statement is (GRDB's statement cache).
    package func each(_ statement: SQLStatement, preparedAs name: SQLPreparedName, _ body: (SQLRow) throws -> Void) throws {
        try each(statement, body)
    }

    /// Each row of the answer handed to `body` as it is read, without keeping them all.
    package func each(_ statement: SQLStatement, _ body: (SQLRow) throws -> Void) throws {
        let prepared = try prepare(statement)
        // Named once, at the first row: most answers on the ingest path are empty.
        var columns: SQLColumns?
        try prepared.eachRow { values in
            let named = columns ?? SQLColumns(prepared.columnNames)
            columns = named
            try body(SQLRow(columns: named, values: values))
        }
    }

    @discardableResult
    package func execute(_ statement: SQLStatement) throws -> Int {
        try prepare(statement).execute()
        return db.changesCount
    }

    @discardableResult
    package func execute(rendered sql: String, _ binds: [SQLValue]) throws -> Int {
        let prepared = try db.cachedStatement(sql: sql)
        try prepared.bind(binds)
        try prepared.execute()
        return db.changesCount
    }

    private func prepare(_ statement: SQLStatement) throws -> Statement {
        let (sql, binds) = statement.rendered(for: dialect)
        let prepared = sql.utf8.count > 4_096 ? try db.makeStatement(sql: sql) : try db.cachedStatement(sql: sql)
        try prepared.bind(binds)
        return prepared
    }
}

extension Statement {
    /// Steps through the answer of the statement as bound, handing each row's values to `body` as SQLite stores them:
    /// read from the statement itself rather than through GRDB's `Row`, which copies every value once more.
    func eachRow(_ body: ([SQLValue]) throws -> Void) throws {
        // GRDB's cursor steps the statement; its rows are views of it, which are not read here.
        let cursor = try Row.fetchCursor(self)
        let handle = sqliteStatement
        let count = columnCount
        while try cursor.next() != nil {
            var values: [SQLValue] = []
            values.reserveCapacity(count)
            for column in 0..<CInt(count) {
                switch sqlite3_column_type(handle, column) {
                case SQLITE_NULL: values.append(.null)
                case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(handle, column)))
                case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(handle, column)))
                case SQLITE_BLOB:
                    let bytes = sqlite3_column_blob(handle, column)
                    let length = Int(sqlite3_column_bytes(handle, column))
                    values.append(.bytes(bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []))
                default:
                    let text = sqlite3_column_text(handle, column)
                    let length = Int(sqlite3_column_bytes(handle, column))
                    values.append(.text(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""))
                }
            }
            try body(values)
        }
    }

    /// Binds `values` in order, each as SQLite's own type, rather than through `StatementArguments`, whose generic
    /// conversion of every value is most of the cost of a short statement on the ingest path. Setting empty
    /// arguments first resets the statement, clears its bindings, and tells GRDB they are bound.
    func bind(_ values: [SQLValue]) throws {
        setUncheckedArguments(StatementArguments())
        let handle = sqliteStatement
        for (offset, value) in values.enumerated() {
            let index = CInt(offset + 1)
            let code: CInt
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
            case .real(let number): code = sqlite3_bind_double(handle, index, number)
            // As GRDB binds a String: its text up to the first NUL.
            case .text(let text): code = sqlite3_bind_text(handle, index, text, -1, transient)
            // An empty array may have no storage, and a blob bound from no pointer is NULL.
            case .bytes(let bytes) where bytes.isEmpty: code = sqlite3_bind_zeroblob(handle, index, 0)
            case .bytes(let bytes):
                code = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, CInt($0.count), transient) }
            }
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errstr(code)), sql: sql)
            }
        }
    }
}

/// SQLite copies a value bound with this destructor before the call returns.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension SQLValue {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let number): self = .integer(number)
        case .double(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .bytes([UInt8](data))
        }
    }
}
