import GRDB

/// One value of a row a read-only query returns, as the store holds it: no database type leaks to the caller.
public enum QueryValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// Why `pushtrace sql`'s statement was not run.
public enum ReadOnlyQueryError: Error, Equatable, Sendable {
    /// The statement would change the store.
    case wouldWrite
    /// The engine refused the statement (a syntax error, an unknown table), in its words.
    case invalid(String)
}

extension Store {
    /// Runs one read-only statement on the store at `path`, opened read-only (nothing can be written through it, and
    /// no `-wal`/`-shm` is left behind): `columns` gets the column names, then `row` each row as it is read, so a
    /// table of any size passes in constant memory. The narrow call `pushtrace sql` needs, instead of a connection.
    public static func query(path: String, sql: String, columns: ([String]) throws -> Void,
                             row: ([QueryValue]) throws -> Void) throws {
        do {
            try readingOnly(path: path) { queue in
                try queue.read { db in
                    let statement = try db.makeStatement(sql: sql)
                    guard statement.isReadonly else { throw ReadOnlyQueryError.wouldWrite }
                    try columns(statement.columnNames)
                    let rows = try Row.fetchCursor(statement)
                    while let next = try rows.next() { try row(next.databaseValues.map(QueryValue.init)) }
                }
            }
        } catch let error as DatabaseError {
            throw ReadOnlyQueryError.invalid(error.message ?? error.description)
        }
    }
}

extension QueryValue {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let i): self = .integer(i)
        case .double(let d): self = .real(d)
        case .string(let s): self = .text(s)
        case .blob(let data): self = .blob(Array(data))
        }
    }
}
