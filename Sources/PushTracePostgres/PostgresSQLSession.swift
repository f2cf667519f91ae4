import NIOCore
import PostgresNIO
import PushTraceStore

/// PostgreSQL's words for what differs between the engines.
package struct PostgresDialect: SQLDialect {
    package init() {}
    package func placeholder(_ index: Int) -> String { "$\(index)" }
    package var byteOrder: String { #"COLLATE "C""# }
    package var descendingNullsLast: String { "DESC NULLS LAST" }
    package var least: String { "least" }
    package var greatest: String { "greatest" }
    package var lockedAgainstDelete: String { " FOR KEY SHARE" }
    package var rowLock: String? { " FOR UPDATE" }
    package func rowLockSkippingLocked(of table: String) -> String { " FOR UPDATE OF \(table) SKIP LOCKED" }
    package func indexedBy(_ index: String) -> String { "" }
    package var orFail: String { "" }
    /// Saturating, computed in `numeric`: PostgreSQL refuses a `bigint` overflow.
    package func sum(_ a: String, _ b: String) -> String {
        "least(greatest(\(a)::numeric + \(b), -9223372036854775808), 9223372036854775807)::bigint"
    }
    package var rowsPerUpsert: Int { 100 }
    package var keysPerRead: Int { 64 }
}

extension PostgresSession: SQLSession {
    package var dialect: PostgresDialect { PostgresDialect() }

    package func rows(_ statement: SQLStatement) throws -> [SQLRow] {
        try sqlRows(Self.query(statement, dialect))
    }

    /// Every row of a statement written for PostgreSQL alone (one that binds arrays), read by column name.
    func sqlRows(_ query: PostgresQuery) throws -> [SQLRow] {
        try Self.sqlRows(self.query(query))
    }

    /// Rows read by column name.
    static func sqlRows(_ rows: some Sequence<PostgresRow>) throws -> [SQLRow] {
        var columns: SQLColumns?
        return try rows.map { row in
            let names = columns ?? SQLColumns(row.map { $0.columnName })
            columns = names
            return SQLRow(columns: names, values: try row.map(SQLValue.init))
        }
    }

    /// Through a cursor of the transaction, a page fetched at a time: PostgreSQL's answer to a statement arrives whole.
    package func each(_ statement: SQLStatement, pagesOf size: Int, _ body: ([SQLRow]) throws -> Void) throws {
        try execute("DECLARE pushtrace_pages NO SCROLL CURSOR FOR \(statement)")
        while true {
            let rows = try rows("FETCH \(unsafeRaw: String(size)) FROM pushtrace_pages")
            if rows.isEmpty { break }
            try body(rows)
        }
        try execute("CLOSE pushtrace_pages")
    }

    @discardableResult
    package func execute(_ statement: SQLStatement) throws -> Int {
        try changes(Self.query(statement, dialect))
    }

    @discardableResult
    package func execute(rendered sql: String, _ binds: [SQLValue]) throws -> Int {
        try changes(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(binds)))
    }

    package func send(_ statement: SQLStatement) throws {
        send(Self.query(statement, dialect))
    }

    package func send(rendered sql: String, _ binds: [SQLValue]) throws {
        send(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(binds)))
    }

    // Awaited, as the store's reads are written: the caller's thread is not held while PostgreSQL answers.

    package func rows(_ statement: SQLStatement) async throws -> [SQLRow] {
        try Self.sqlRows(await query(Self.query(statement, dialect)))
    }

    package func each(_ statement: SQLStatement, _ body: (SQLRow) throws -> Void) async throws {
        for row in try await rows(statement) { try body(row) }
    }

    package func each(_ statement: SQLStatement, preparedAs name: SQLPreparedName, _ body: (SQLRow) throws -> Void) async throws {
        for row in try await rows(statement, preparedAs: name) { try body(row) }
    }

    @discardableResult
    package func execute(_ statement: SQLStatement) async throws -> Int {
        try await query(Self.query(statement, dialect)).metadata.rows ?? 0
    }

    /// The statement as postgres-nio sends it: its text, and each value bound with its own type.
    static func query(_ statement: SQLStatement, _ dialect: PostgresDialect) -> PostgresQuery {
        let (sql, values) = statement.rendered(for: dialect)
        return PostgresQuery(unsafeSQL: sql, binds: bindings(values))
    }

    /// Each value bound with its own type.
    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: binds.appendNull()
            case .integer(let number): binds.append(number)
            case .real(let number): binds.append(number)
            case .text(let text): binds.append(text)
            case .bytes(let bytes): binds.append(ByteBuffer(bytes: bytes))
            }
        }
        return binds
    }
}

extension SQLValue {
    /// A cell as the store reads it: the integer types as one integer, `bool` as 0 or 1, the text types as text.
    init(_ cell: PostgresCell) throws {
        guard cell.bytes != nil else {
            self = .null
            return
        }
        switch cell.dataType {
        case .int2, .int4, .int8: self = .integer(try cell.decode(Int64.self))
        case .bool: self = .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .float4, .float8: self = .real(try cell.decode(Double.self))
        case .bytea: self = .bytes(Array(buffer: try cell.decode(ByteBuffer.self)))
        default: self = .text(try cell.decode(String.self))
        }
    }
}
