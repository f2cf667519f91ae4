/// One statement and its bound values, written once for every engine: each interpolated value is bound, never
/// spliced into the text, and a ``SQLDialect`` renders the placeholders its engine expects.
///
/// ```swift
/// let statement: SQLStatement = "SELECT cause FROM notification WHERE app_id = \(appID)"
/// ```
public struct SQLStatement: Sendable, ExpressibleByStringInterpolation {
    /// A piece of the statement: text as written, or a value to bind.
    public enum Fragment: Sendable, Hashable {
        case sql(String)
        case bind(SQLValue)
    }

    public private(set) var fragments: [Fragment]

    public init(fragments: [Fragment]) { self.fragments = fragments }

    public init(stringLiteral value: String) { fragments = [.sql(value)] }

    public init(stringInterpolation: StringInterpolation) { fragments = stringInterpolation.fragments }

    /// Builds a statement from literals, bound values and other statements.
    public struct StringInterpolation: StringInterpolationProtocol {
        var fragments: [Fragment] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) { fragments.append(.sql(literal)) }

        /// A value, bound.
        public mutating func appendInterpolation(_ value: some SQLValueConvertible) { fragments.append(.bind(value.sqlValue)) }

        /// Another statement, spliced with its binds.
        public mutating func appendInterpolation(_ statement: SQLStatement) { fragments += statement.fragments }

        /// Text written by the program (a column list, a dialect's keyword), never a client's value.
        public mutating func appendInterpolation(unsafeRaw text: String) { fragments.append(.sql(text)) }
    }

    /// The statements one after the other, `separator` between them.
    public static func joined(_ statements: [SQLStatement], separator: String) -> SQLStatement {
        var fragments: [Fragment] = []
        for (index, statement) in statements.enumerated() {
            if index > 0 { fragments.append(.sql(separator)) }
            fragments += statement.fragments
        }
        return SQLStatement(fragments: fragments)
    }

    /// The text an engine runs, with `dialect`'s placeholders, and the values in their order.
    public func rendered(for dialect: some SQLDialect) -> (sql: String, binds: [SQLValue]) {
        var sql = ""
        var binds: [SQLValue] = []
        for fragment in fragments {
            switch fragment {
            case .sql(let text): sql += text
            case .bind(let value):
                binds.append(value)
                sql += dialect.placeholder(binds.count)
            }
        }
        return (sql, binds)
    }
}
