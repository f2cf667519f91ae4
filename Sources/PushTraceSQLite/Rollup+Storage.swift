import GRDB
import PushTraceStore

/// The rollup tables as SQLite keeps them: each row's summed delta upserted.
extension Rollup {
    /// The upsert that adds one row's delta.
    var upsertSQL: String {
        let columns = keys + measures + (keepsExample ? ["example_id"] : [])
        var updates = measures.map { "\($0) = \($0) + excluded.\($0)" }
        if keepsExample { updates.append("example_id = coalesce(excluded.example_id, example_id)") }
        return """
            INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))
            ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }
}

extension RollupValue: DatabaseValueConvertible {
    var sqlValue: SQLValue {
        switch self {
        case .integer(let value): .integer(value)
        case .text(let value): .text(value)
        }
    }

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
    /// Writes every row's delta, inside the caller's transaction, and forgets them.
    func write(_ db: Database) throws {
        // Each rollup's statement once per call: its text is made from the rollup's columns.
        var statements: [String: Statement] = [:]
        for row in all {
            var values: [SQLValue] = row.key.map(\.sqlValue) + row.measures.map(SQLValue.integer)
            if row.rollup.keepsExample { values.append(row.example.sqlValue) }
            let table = row.rollup.table
            let statement = try statements[table] ?? db.cachedStatement(sql: row.rollup.upsertSQL)
            statements[table] = statement
            try statement.bind(values)
            try statement.execute()
        }
        removeAll()
    }
}
