import GRDB
import PushTraceStore

extension RollupValue: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue {
        switch self {
        case .integer(let value): return value.databaseValue
        case .text(let value): return value.databaseValue
        }
    }

    package static func fromDatabaseValue(_ dbValue: DatabaseValue) -> RollupValue? {
        if let value = Int64.fromDatabaseValue(dbValue) { return .integer(value) }
        return String.fromDatabaseValue(dbValue).map(RollupValue.text)
    }
}

extension RollupDeltas {
    /// Writes every row's delta, inside the caller's transaction, and forgets them (``write(to:)``).
    func write(_ db: Database) throws {
        try write(to: SQLiteSession(db: db))
    }
}
