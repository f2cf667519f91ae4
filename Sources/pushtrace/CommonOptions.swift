import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// `--db`, shared by every command that reads or writes data (docs/spec.md §7: also `PUSHTRACE_DB`).
struct DatabaseOptions: ParsableArguments {
    /// The store a command uses when neither `--db` nor `PUSHTRACE_DB` names one.
    static let defaultPath = "pushtrace.sqlite"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: an SQLite database file, or a PostgreSQL database as postgres://user:password@host:port/name (its gaps from PGHOST, PGUSER, PGPASSWORD, …) (env PUSHTRACE_DB).",
            valueName: "path-or-url"))
    var db = ProcessInfo.processInfo.environment["PUSHTRACE_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? DatabaseOptions.defaultPath

    /// The engine `--db` names.
    var engine: StoreEngine { StoreEngine(db: db) }

    /// `--db` as messages show it: without a password (``StoreEngine/shown(_:)``).
    var shownDB: String { StoreEngine.shown(db) }

    func validate() throws { Self.warnOfPasswordInArguments() }

    /// Warns when a store's password is on the command line (`--db`, or `copy`'s `--from` and `--to`), where `ps`
    /// and shell history show it to other users.
    static func warnOfPasswordInArguments(_ arguments: [String] = CommandLine.arguments) {
        let options = ["--db", "--from", "--to"]
        var values: [String] = []
        for (index, argument) in arguments.enumerated() {
            if options.contains(argument), index + 1 < arguments.count { values.append(arguments[index + 1]) }
            for option in options where argument.hasPrefix(option + "=") { values.append(String(argument.dropFirst(option.count + 1))) }
        }
        if values.contains(where: StoreEngine.carriesPassword) {
            printError(
                "pushtrace: warning: a database password on the command line can be read by other users (ps, shell "
                    + "history): give it in PGPASSWORD, or the whole URL in PUSHTRACE_DB (for the service, in "
                    + "/etc/pushtrace/pushtrace.env)")
        }
    }

    /// Opens the store for a command that only reads: it must exist.
    func existingStore() throws -> any TraceStore {
        guard engine.exists else {
            throw UsageError("no database at \(shownDB): ingest bundles first (pushtrace ingest --db \(shownDB) FILE…)")
        }
        return try openStore()
    }

    /// Opens (creating when needed) the store. A store an older pushtrace wrote, with a row per record, is converted
    /// to record blocks first, its progress told on stderr.
    func openStore() throws -> any TraceStore {
        try engine.open { progress in
            printError(
                "pushtrace: converting \(shownDB) to record blocks: \(progress.bundles) of \(progress.totalBundles) "
                    + "bundles, \(progress.records) records moved")
        }
    }

    /// Runs `body` on the existing store, closed afterwards.
    func withExistingStore<T>(_ body: (any TraceStore) throws -> T) throws -> T {
        let store = try existingStore()
        defer { close(store) }
        return try body(store)
    }

    /// Runs `body` on the existing store, closed afterwards, awaiting it.
    func withExistingStore<T>(_ body: (any TraceStore) async throws -> T) async throws -> T {
        let store = try existingStore()
        defer { close(store) }
        return try await body(store)
    }

    /// Closes a store a command opened: SQLite's log is checkpointed and removed, so a command leaves the folder
    /// as a closed store has it. A failure to close loses nothing committed; it is said on stderr.
    func close(_ store: any TraceStore) {
        do { try store.close() } catch { printError("pushtrace: closing \(shownDB): \(store.explaining(error))") }
    }

    /// Refuses an `--app` that names no stored app (a misspelt bundle ID answers nothing, silently), listing those
    /// there are. Asked only when an answer came back empty, so a known app costs nothing.
    func requireKnownApp(_ app: String, in store: any TraceStore) async throws {
        do {
            try await store.requireKnownApp(app)
        } catch let error as StoreError where error.code == .unknownApp {
            throw UsageError("\(error) (in \(shownDB))")
        }
    }
}

/// `--format`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// Instants on the command line: `2026-11-10`, `2026-11-10T08:30:00Z`, or epoch milliseconds.
enum Instant {
    static func parse(_ text: String, option: String) throws -> Int64 {
        guard let ms = InstantText.parse(text) else {
            throw UsageError("\(option) \"\(TerminalText.escaped(text))\" is not a date: \(InstantText.rangeHint)")
        }
        return ms
    }

    static func format(_ ms: Int64?) -> String { InstantText.format(ms) }
}

/// Prints `value` as one pretty-printed JSON document (keys sorted), the `--format json` of every command.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Prints to standard error (progress and diagnostics, never the answer).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// The app a command's notification belongs to, in the CLI's words when it cannot be told.
enum AppChoice {
    /// `app` when given, else the one app notification `id` is stored for (nil when none); a usage error naming
    /// the apps when there are several.
    static func app(_ app: String?, ofNotification id: String, in store: any TraceStore) async throws -> String? {
        do {
            return try await store.app(app, ofNotification: id)
        } catch let error as StoreError where error.code == .ambiguousNotification {
            throw UsageError("\(error); say which with --app")
        }
    }
}
