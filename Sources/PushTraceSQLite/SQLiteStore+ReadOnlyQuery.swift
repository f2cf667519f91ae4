import GRDB
import PushTraceStore

extension SQLiteStore {
    /// Runs one read-only statement on the store at `path`, opened read-only (nothing can be written through it, and
    /// no `-wal`/`-shm` is left behind): `columns` gets the column names, then `row` each row as it is read, so a
    /// table of any size passes in constant memory. The narrow call `pushtrace sql` needs, instead of a connection.
    public static func query(
        path: String, sql: String, columns: ([String]) throws -> Void,
        row: ([QueryValue]) throws -> Void
    ) throws {
        do {
            try readingOnly(path: path) { queue in
                try queue.read { db in
                    let statement = try db.makeStatement(sql: sql)
                    guard statement.isReadonly else { throw StoreError.wouldWrite }
                    try columns(statement.columnNames)
                    let rows = try Row.fetchCursor(statement)
                    while let next = try rows.next() { try row(next.databaseValues.map(QueryValue.init)) }
                }
            }
        } catch let error as DatabaseError {
            throw StoreError.invalidQuery(error.message ?? error.description)
        }
    }
}

extension QueryValue {
    /// A stored value as `pushtrace sql` prints it: as the store reads it (``SQLValue``), which every value is.
    init(_ value: DatabaseValue) {
        self = QueryValue(sqlValue: SQLValue(value))!
    }
}
