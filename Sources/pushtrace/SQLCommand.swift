import ArgumentParser
import Foundation
import PushTraceRecords
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

            csv and json print each row as it is read, so they export a table of any size. In json, a column name \
            the query repeats gets :2, :3 (SELECT b.app_id, n.app_id → "app_id", "app_id:2").
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, csv, json }

    @OptionGroup var database: DatabaseOptions
    @Argument(help: ArgumentHelp("The query.", valueName: "sql")) var query: String
    @Option(help: "table, csv or json.") var format: Format = .table

    func run() throws {
        do {
            try Store.readingOnly(path: database.db) { queue in try queue.read { db in
                let statement = try db.makeStatement(sql: query)
                guard statement.isReadonly else {
                    throw UsageError("pushtrace sql is read-only: the statement would change the database")
                }
                try write(columns: statement.columnNames, rows: try Row.fetchCursor(statement))
            } }
        } catch let error as DatabaseError {
            throw UsageError("SQL error: \(error.message ?? error.description)")
        }
    }

    /// Prints the rows as they are read, so that csv and json export a table of any size in constant memory; a
    /// table's column widths need every row first.
    private func write(columns: [String], rows: RowCursor) throws {
        switch format {
        case .table:
            var table = TextTable(columns)
            var count = 0
            while let row = try rows.next() {
                table.add(row.databaseValues.map(Self.text))
                count += 1
            }
            print(table.rendered)
            print("(\(count) row\(count == 1 ? "" : "s"))")
        case .csv:
            // Into a file or a pipe, the values exactly as stored (CSV quoting carries any newline); onto a terminal,
            // what a device sent is shown escaped rather than obeyed.
            let onTerminal = isatty(STDOUT_FILENO) != 0
            let shown = { (text: String) -> String in onTerminal ? TerminalText.escaped(text) : text }
            print(columns.map(Self.csv).joined(separator: ","))
            while let row = try rows.next() {
                print(row.databaseValues.map { Self.csv(shown(Self.text($0))) }.joined(separator: ","))
            }
        case .json:
            // One array, an object per row, laid out as one pretty-printed document would be.
            let keys = Self.uniqueKeys(columns)
            var count = 0
            while let row = try rows.next() {
                let object = Dictionary(uniqueKeysWithValues: zip(keys, row.databaseValues.map(Self.json)))
                let text = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]),
                                  as: UTF8.self)
                print(count == 0 ? "[\n" : ",\n", terminator: "")
                print(text.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n"), terminator: "")
                count += 1
            }
            print(count == 0 ? "[]" : "\n]")
        }
    }

    /// The columns as JSON keys: a name the query repeats (`a.app_id, b.app_id` are both `app_id`) gets `:2`, `:3`.
    static func uniqueKeys(_ columns: [String]) -> [String] {
        var used: Set<String> = []
        return columns.map { name in
            var key = name
            var occurrence = 1
            while !used.insert(key).inserted {
                occurrence += 1
                key = "\(name):\(occurrence)"
            }
            return key
        }
    }

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

    /// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, its quotes doubled. Byte by
    /// byte: these are ASCII, and an export calls this for every field of every row.
    static func csv(_ field: String) -> String {
        let quote = UInt8(ascii: "\"")
        guard field.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == quote || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        else { return field }
        var quoted = [quote]
        for byte in field.utf8 {
            quoted.append(byte)
            if byte == quote { quoted.append(quote) }
        }
        quoted.append(quote)
        return String(decoding: quoted, as: UTF8.self)
    }
}
