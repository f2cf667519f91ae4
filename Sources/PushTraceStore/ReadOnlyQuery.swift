/// One value of a row a read-only query returns, as the store holds it: no database type leaks to the caller.
public enum QueryValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}
