/// A value bound to a statement or read from a row, in the few types the store's tables hold.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    /// Read only: no table holds one, but an aggregate or `pushtrace sql` may answer one.
    case real(Double)
    case text(String)
    case bytes([UInt8])
}

/// A Swift type the store binds, and reads back, as one ``SQLValue``.
public protocol SQLValueConvertible {
    /// The value bound for this one.
    var sqlValue: SQLValue { get }
    /// The value read from a column, or nil when the column holds another type.
    init?(sqlValue: SQLValue)
}

extension String: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(self) }
    public init?(sqlValue: SQLValue) {
        guard case .text(let text) = sqlValue else { return nil }
        self = text
    }
}

extension Int64: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self) }
    public init?(sqlValue: SQLValue) {
        guard case .integer(let number) = sqlValue else { return nil }
        self = number
    }
}

extension Int: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard case .integer(let number) = sqlValue, let value = Int(exactly: number) else { return nil }
        self = value
    }
}

/// Stored as 0 or 1: both engines' tables keep flags as integers.
extension Bool: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public init?(sqlValue: SQLValue) {
        guard case .integer(let number) = sqlValue else { return nil }
        self = number != 0
    }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    public init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
        } else if let value = Wrapped(sqlValue: sqlValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

/// Bytes bound as a blob (SQLite) or `bytea` (PostgreSQL).
public struct SQLBytes: SQLValueConvertible, Sendable, Hashable {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var sqlValue: SQLValue { .bytes(bytes) }
    public init?(sqlValue: SQLValue) {
        guard case .bytes(let bytes) = sqlValue else { return nil }
        self.bytes = bytes
    }
}

extension SQLValue: SQLValueConvertible {
    public var sqlValue: SQLValue { self }
    public init?(sqlValue: SQLValue) { self = sqlValue }
}
