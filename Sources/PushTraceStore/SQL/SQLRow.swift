/// The column names of one answer, shared by its rows, so that a row is read by name at the cost of one lookup.
public final class SQLColumns: Sendable {
    public let names: [String]
    private let index: [String: Int]

    public init(_ names: [String]) {
        self.names = names
        // The first of two columns of one name wins, as SQLite's and PostgreSQL's own lookups do.
        index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The position of the column called `name`, or nil.
    public func position(of name: String) -> Int? { index[name] }
}

/// One row of an answer, its values read by column name.
public struct SQLRow: Sendable {
    public let columns: SQLColumns
    public let values: [SQLValue]

    public init(columns: SQLColumns, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the column called `name` as `T`; fails when there is no such column or it holds another type.
    public func decode<T: SQLValueConvertible>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let position = columns.position(of: name) else { throw StoreError.noColumn(name, columns.names) }
        guard let value = T(sqlValue: values[position]) else {
            throw StoreError.wrongType(name, expected: "\(T.self)", found: values[position])
        }
        return value
    }

    /// The value of the column at `position` as `T`: for a statement whose columns are read in their order.
    public func decode<T: SQLValueConvertible>(at position: Int, as type: T.Type = T.self) throws -> T {
        guard values.indices.contains(position) else { throw StoreError.noColumn("#\(position)", columns.names) }
        guard let value = T(sqlValue: values[position]) else {
            throw StoreError.wrongType(columns.names[position], expected: "\(T.self)", found: values[position])
        }
        return value
    }
}
