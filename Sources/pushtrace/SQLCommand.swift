import ArgumentParser
import Foundation
import GRDB
import PushTraceStore

struct SQL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run a read-only SQL query on the store.",
        discussion: """
            The escape hatch: any SELECT over the tables described in docs/schema.md (bundle, record, \
            rejected_line, config, device, notification). The database is opened read-only; a statement that \
            would write is refused.

            Examples:
              pushtrace sql "SELECT cause, count(*) FROM notification GROUP BY cause"
              pushtrace sql --format csv "SELECT * FROM notification WHERE service_expired"
              pushtrace sql --format json "SELECT line, reason FROM rejected_line"
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, csv, json }

    @OptionGroup var database: DatabaseOptions
    @Argument(help: ArgumentHelp("The query.", valueName: "sql")) var query: String
    @Option(help: "table, csv or json.") var format: Format = .table

    func run() throws {
        let queue = try Store.openReadOnly(path: database.db)
        let (columns, rows): ([String], [[DatabaseValue]])
        do {
            (columns, rows) = try queue.read { db in
                let statement = try db.makeStatement(sql: query)
                guard statement.isReadonly else {
                    throw UsageError("pushtrace sql is read-only: the statement would change the database")
                }
                return (statement.columnNames, try Row.fetchAll(statement).map { Array($0.databaseValues) })
            }
        } catch let error as DatabaseError {
            throw UsageError("SQL error: \(error.message ?? error.description)")
        }
        switch format {
        case .table:
            var table = TextTable(columns)
            for row in rows { table.add(row.map(Self.text)) }
            print(table.rendered)
            print("(\(rows.count) row\(rows.count == 1 ? "" : "s"))")
        case .csv:
            print(columns.map(Self.csv).joined(separator: ","))
            for row in rows { print(row.map { Self.csv(Self.text($0)) }.joined(separator: ",")) }
        case .json:
            let objects: [JSONValueConvertible] = rows.map { row in Dictionary(uniqueKeysWithValues: zip(columns, row.map(Self.json))) }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }

    typealias JSONValueConvertible = [String: Any]

    static func text(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return s
        case .blob(let data): return "x'" + data.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    static func json(_ value: DatabaseValue) -> Any {
        switch value.storage {
        case .null: return NSNull()
        case .int64(let i): return i
        case .double(let d): return d
        case .string(let s): return s
        case .blob(let data): return data.base64EncodedString()
        }
    }

    static func csv(_ field: String) -> String {
        field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
            ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
    }
}
