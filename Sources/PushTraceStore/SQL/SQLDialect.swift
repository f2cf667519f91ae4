/// What differs between the engines' SQL, and nothing else: statements written once in this module ask it for
/// these few words (vapor/sql-kit's `SQLDialect` draws the same line).
public protocol SQLDialect: Sendable {
    /// The placeholder of the `index`th bound value, counted from 1: `?` for SQLite, `$1` for PostgreSQL.
    func placeholder(_ index: Int) -> String
    /// Appended to a text column to order it byte by byte, the order keys are compared in everywhere: nothing for
    /// SQLite (its default collation is binary), `COLLATE "C"` for PostgreSQL.
    var byteOrder: String { get }
    /// An `ORDER BY` direction, descending with NULL last: SQLite sorts NULL first, so `DESC` puts it last;
    /// PostgreSQL must be told.
    var descendingNullsLast: String { get }
    /// The smaller and the larger of two values: `min`/`max` in SQLite, `least`/`greatest` in PostgreSQL (whose
    /// `min`/`max` are aggregates only).
    var least: String { get }
    var greatest: String { get }
    /// Appended to a `SELECT` of rows that must not be deleted before the transaction ends: nothing for SQLite (one
    /// writer, which is this transaction), ` FOR KEY SHARE` for PostgreSQL (another server may be deleting).
    var lockedAgainstDelete: String { get }
    /// Appended to a `SELECT` of rows to update where several processes write at once: ` FOR UPDATE` for
    /// PostgreSQL; nil for SQLite, whose one writer is this transaction. Where it is nil, rows are neither locked nor
    /// created ahead of their writes.
    var rowLock: String? { get }
    /// ``rowLock`` of `table`'s rows (a query may join others), passing over rows another transaction holds; empty
    /// where rows are not locked.
    func rowLockSkippingLocked(of table: String) -> String
    /// Follows a table name to name the index a query must use: SQLite's `INDEXED BY`, which holds its planner to a
    /// partial index; nothing for PostgreSQL, whose planner picks one by statistics.
    func indexedBy(_ index: String) -> String
    /// Follows `INSERT` or `UPDATE` where an error ends the whole work (its savepoint or transaction rolled back):
    /// SQLite's ` OR FAIL` then keeps no statement journal to undo the statement alone; nothing for PostgreSQL.
    var orFail: String { get }
    /// The sum of two `bigint` columns, kept within 64 bits: a hostile client can claim huge download sizes, and an
    /// overflow would fail every later write of the row.
    func sum(_ a: String, _ b: String) -> String
    /// How many rows one upsert statement writes where a writer has many: 1 for SQLite, whose statements cost no
    /// round trip and whose one-row statement is prepared once; more for PostgreSQL, where each statement is
    /// parsed, planned and answered on its own.
    var rowsPerUpsert: Int { get }
    /// How many notifications' blocks one statement reads where many are read together (settling a batch): 1 for
    /// SQLite, whose statements cost no round trip and whose rows are read as they come, so memory holds one block
    /// at a time; more for PostgreSQL, whose answer arrives whole.
    var keysPerRead: Int { get }
}

extension SQLDialect {
    /// `rows` parenthesized lists of `columns` placeholders, numbered on from 1: a multi-row `VALUES`.
    package func valueLists(columns: Int, rows: Int) -> String {
        (0..<rows).map { row in
            "(" + (1...columns).map { placeholder(row * columns + $0) }.joined(separator: ", ") + ")"
        }.joined(separator: ", ")
    }
}
