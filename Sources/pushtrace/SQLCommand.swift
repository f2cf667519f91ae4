import ArgumentParser
import Foundation
import PushTraceRecords
import PushTraceStore

struct SQL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run a read-only SQL query on the store.",
        discussion: """
            The escape hatch: any SELECT over the tables described in docs/schema.md (bundle and client, \
            notification, device, config and config_body, rejected_line, the rollups). The statement runs on a read-only connection; one that \
            would write is refused. Stored lines are kept compressed in record blocks: read them with \
            pushtrace export.

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
        var output = RowOutput(format: format)
        do {
            try database.engine.query(query, columns: { output.start($0) }, row: { output.add($0) })
        } catch StoreError.wouldWrite {
            throw UsageError("pushtrace sql is read-only: the statement would change the database")
        } catch StoreError.invalidQuery(let message) {
            throw UsageError("SQL error: \(message)")
        } catch StoreError.needsDirectConnection {
            throw UsageError(
                "pushtrace sql does not run through a pooler in transaction mode (pool_mode=transaction), which would "
                    + "keep what the statement set for its session on a server connection the servers use next: give it "
                    + "the database's own address, or a pool in session mode")
        } catch StoreError.noReader(let message) {
            throw UsageError(
                "pushtrace sql runs on PostgreSQL as the role DATABASE_reader, which may only read, and it cannot "
                    + "(\(TerminalText.escaped(message))): the store's owner lacked CREATEROLE when the store was "
                    + "made. docs/deploy.md (Connecting) has the statements an administrator runs to make it")
        } catch StoreError.unsafeReader(let role) {
            throw UsageError(
                "pushtrace sql will not run as the role \(TerminalText.escaped(role)): it holds privileges of its own "
                    + "or is a member of another role, so it could read more than the store. An administrator "
                    + "takes that back (ALTER ROLE \(TerminalText.escaped(role)) NOSUPERUSER NOCREATEROLE NOCREATEDB "
                    + "NOREPLICATION NOBYPASSRLS, and REVOKE of each role granted to it; docs/security.md)")
        }
        output.finish()
    }

    /// Prints the rows as they are read, so that csv and json export a table of any size in constant memory; a
    /// table's column widths need every row first.
    private struct RowOutput {
        let format: Format
        private var keys: [String] = []
        private var table: TextTable?
        private var count = 0
        // Into a file or a pipe, CSV holds the values exactly as stored (its quoting carries any newline); onto a
        // terminal, what a device sent is shown escaped rather than obeyed.
        private let onTerminal = isatty(STDOUT_FILENO) != 0

        init(format: Format) { self.format = format }

        mutating func start(_ names: [String]) {
            switch format {
            case .table: table = TextTable(names)
            case .csv: print(names.map(SQL.csv).joined(separator: ","))
            case .json: keys = SQL.uniqueKeys(names)
            }
        }

        mutating func add(_ values: [QueryValue]) {
            switch format {
            case .table:
                table?.add(values.map(SQL.text))
            case .csv:
                let escape = onTerminal
                print(values.map { SQL.csv(escape ? TerminalText.escaped(SQL.text($0)) : SQL.text($0)) }.joined(separator: ","))
            case .json:
                // One array, an object per row, laid out as one pretty-printed document would be.
                let object = Dictionary(uniqueKeysWithValues: zip(keys, values.map(SQL.json)))
                let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
                let text = String(decoding: data, as: UTF8.self)
                print(count == 0 ? "[\n" : ",\n", terminator: "")
                print(text.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n"), terminator: "")
            }
            count += 1
        }

        func finish() {
            switch format {
            case .table:
                if let table { print(table.rendered) }
                print("(\(count) row\(count == 1 ? "" : "s"))")
            case .csv: break
            case .json: print(count == 0 ? "[]" : "\n]")
            }
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

    static func text(_ value: QueryValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .text(let s): return s
        case .blob(let bytes): return "x'" + bytes.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    static func json(_ value: QueryValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .integer(let i): return i
        case .real(let d): return d
        case .text(let s): return s
        case .blob(let bytes): return Data(bytes).base64EncodedString()
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
