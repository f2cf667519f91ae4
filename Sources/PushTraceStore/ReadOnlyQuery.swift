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
    /// PostgreSQL: the role that may only read is missing, or the store's owner may not switch to it (its words).
    case noReader(String)
    /// PostgreSQL: the role that may only read (named) holds privileges of its own or is a member of another role,
    /// so switching to it could read or do more than the store's tables allow.
    case unsafeReader(String)
    /// PostgreSQL: the URL goes through a pooler in transaction mode, which would keep the statement's session
    /// settings for the next client of the server connection.
    case needsDirectConnection
}
