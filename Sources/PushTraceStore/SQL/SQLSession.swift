/// The few operations the engine-neutral logic of the store needs of a database connection: statements run inside
/// whatever transaction the engine opened for the work, answers read by column name.
///
/// Each engine conforms its own connection type, and keeps for itself only what is truly its own (connections,
/// transactions, migrations, locks). Logic written against this protocol is written once for both engines.
public protocol SQLSession: SendableMetatype {
    associatedtype Dialect: SQLDialect
    /// The engine's dialect, which statements are rendered for.
    var dialect: Dialect { get }
    /// Every row of the statement's answer.
    func rows(_ statement: SQLStatement) throws -> [SQLRow]
    /// Each row of the statement's answer handed to `body`: as it is read where the engine reads rows one at a time,
    /// so that memory holds one, else from the whole answer.
    func each(_ statement: SQLStatement, _ body: (SQLRow) throws -> Void) throws
    /// The statement's rows handed to `body` `size` at a time (the last page may hold fewer): a read of a whole table,
    /// whose answer must not be held at once.
    func each(_ statement: SQLStatement, pagesOf size: Int, _ body: ([SQLRow]) throws -> Void) throws
    /// Every row of a statement that runs for every read of its kind, whose text is the same each time: an engine
    /// that plans each statement it is sent may prepare it once per connection, by `name`, and keep its plan.
    func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) throws -> [SQLRow]
    /// ``each(_:_:)`` of a statement an engine may keep prepared.
    func each(_ statement: SQLStatement, preparedAs name: SQLPreparedName, _ body: (SQLRow) throws -> Void) throws
    /// Runs a statement that answers no rows; returns how many rows it changed.
    @discardableResult
    func execute(_ statement: SQLStatement) throws -> Int
    /// Runs a statement already rendered for ``dialect`` with its values: for a statement run many times over, whose
    /// text is made once. Returns how many rows it changed.
    @discardableResult
    func execute(rendered sql: String, _ binds: [SQLValue]) throws -> Int
    /// Runs a statement whose answer is not needed now. An engine whose statements cross a network may send it
    /// without waiting, in order with the statements after it: its failure is then thrown by the next call that
    /// waits for an answer, and at the latest by the transaction's end.
    func send(_ statement: SQLStatement) throws
    /// ``send(_:)`` of a statement already rendered for ``dialect``.
    func send(rendered sql: String, _ binds: [SQLValue]) throws

    // The same, awaited, as the store's SQL is written: a session that waits on a network may answer these without
    // holding a thread. A session that answers at once runs the synchronous ones, so an async body on it never
    // suspends and runs inline (``InlineExecutor``).

    /// ``rows(_:)``, awaited.
    func rows(_ statement: SQLStatement) async throws -> [SQLRow]
    /// ``each(_:_:)``, awaited.
    func each(_ statement: SQLStatement, _ body: (SQLRow) throws -> Void) async throws
    /// ``rows(_:preparedAs:)``, awaited.
    func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) async throws -> [SQLRow]
    /// ``each(_:preparedAs:_:)``, awaited.
    func each(_ statement: SQLStatement, preparedAs name: SQLPreparedName, _ body: (SQLRow) throws -> Void) async throws
    /// ``execute(_:)``, awaited.
    @discardableResult
    func execute(_ statement: SQLStatement) async throws -> Int
}

/// The statements an engine may keep prepared (``SQLSession/rows(_:preparedAs:)``), each written once in the store.
public enum SQLPreparedName: String, Sendable, CaseIterable {
    /// ``BlockReading/diagnosis(key:appID:)``.
    case diagnosis = "pushtrace_diagnosis"
    /// ``BlockReading/configInForce(appID:deviceID:at:)``.
    case configInForce = "pushtrace_config_in_force"
}

extension SQLSession {
    /// An engine that keeps every statement it was sent (SQLite's statement cache) runs it as any other.
    public func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) throws -> [SQLRow] { try rows(statement) }

    public func each(_ statement: SQLStatement, _ body: (SQLRow) throws -> Void) throws {
        for row in try rows(statement) { try body(row) }
    }

    /// Pages of ``each(_:_:)``'s rows: held a page at a time where the engine reads rows one at a time.
    public func each(_ statement: SQLStatement, pagesOf size: Int, _ body: ([SQLRow]) throws -> Void) throws {
        var page: [SQLRow] = []
        try each(statement) { row in
            page.append(row)
            if page.count == size {
                try body(page)
                page.removeAll(keepingCapacity: true)
            }
        }
        if !page.isEmpty { try body(page) }
    }

    public func each(_ statement: SQLStatement, preparedAs name: SQLPreparedName, _ body: (SQLRow) throws -> Void) throws {
        for row in try rows(statement, preparedAs: name) { try body(row) }
    }

    /// An engine that answers in process runs it at once.
    public func send(_ statement: SQLStatement) throws { try execute(statement) }

    public func send(rendered sql: String, _ binds: [SQLValue]) throws { try execute(rendered: sql, binds) }
}

/// A session that answers at once: each awaited call is its synchronous one, and never suspends.
extension SQLSession {
    public func rows(_ statement: SQLStatement) async throws -> [SQLRow] { try now { try $0.rows(statement) } }

    public func each(_ statement: SQLStatement, _ body: (SQLRow) throws -> Void) async throws {
        try now { try $0.each(statement, body) }
    }

    public func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) async throws -> [SQLRow] {
        try now { try $0.rows(statement, preparedAs: name) }
    }

    public func each(_ statement: SQLStatement, preparedAs name: SQLPreparedName, _ body: (SQLRow) throws -> Void) async throws {
        try now { try $0.each(statement, preparedAs: name, body) }
    }

    @discardableResult
    public func execute(_ statement: SQLStatement) async throws -> Int { try now { try $0.execute(statement) } }

    /// `body` on this session in a synchronous context, where its calls are the synchronous ones.
    private func now<T>(_ body: (Self) throws -> T) rethrows -> T { try body(self) }
}
