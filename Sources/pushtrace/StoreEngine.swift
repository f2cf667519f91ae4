import Foundation
import PushTracePostgres
import PushTraceRecords
import PushTraceSQLite
import PushTraceStore

/// The engine `--db` names (docs/spec.md §7, §9): a PostgreSQL URL (`postgres://…`, `postgresql://…`), or else the path of
/// an SQLite file. Where the CLI and `serve` open a store (besides it, only `--version`, the process-wide settings
/// and `serve --durability` name SQLite); everything after opening talks to the store's interface.
enum StoreEngine: Equatable {
    case sqlite(path: String)
    case postgres(url: String)
    /// A URL of a scheme no engine has (`mysql://…`): refused when opened, rather than taken for a file name.
    case unknown(scheme: String)

    init(db: String) {
        let lowered = db.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(url: db)
        } else if let colon = lowered.range(of: "://"), !lowered[..<colon.lowerBound].isEmpty,
            lowered[..<colon.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        {
            self = .unknown(scheme: String(lowered[..<colon.lowerBound]))
        } else {
            self = .sqlite(path: db)
        }
    }

    /// `db` as logs, messages and metrics show it: a URL without the password of its user part or of its
    /// `password=` parameter (docs/security.md), a file path as it is. Parsed by hand, so that a URL too malformed to
    /// open is hidden as well as one that opens.
    static func shown(_ db: String) -> String {
        guard let schemeEnd = db.range(of: "://") else { return db }
        let rest = db[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var shown = String(db[..<schemeEnd.upperBound])
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let user = rest[..<at]
            shown += (user.firstIndex(of: ":").map { String(user[..<$0]) } ?? String(user)) + String(rest[at..<authorityEnd])
        } else {
            shown += rest[..<authorityEnd]
        }
        var tail = String(rest[authorityEnd...])
        if let query = tail.firstIndex(of: "?") {
            let parameters = tail[tail.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
                .filter { !$0.lowercased().hasPrefix("password=") }
            tail = String(tail[..<query]) + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
        }
        return shown + tail
    }

    /// Whether `db` is a URL that carries a password.
    static func carriesPassword(_ db: String) -> Bool { shown(db) != db }

    /// SQLite's settings that only `serve` changes.
    struct SQLiteTuning {
        var durability = SQLiteStore.Durability.normal
        var busyTimeout: TimeInterval = 10
        var writerCacheMiB = 64
        var readerCacheMiB = 8
        var checkpointPages = 1_000
    }

    /// Opens (creating and migrating when needed) the store. `converting` is told the progress of converting a
    /// store an older pushtrace wrote.
    func open(
        tuning: SQLiteTuning = SQLiteTuning(),
        converting: ((ConversionProgress) -> Void)? = nil
    ) throws -> any TraceStore {
        switch self {
        case .sqlite(let path):
            return try SQLiteStore(
                path: path, durability: tuning.durability, busyTimeout: tuning.busyTimeout,
                writerCacheMiB: tuning.writerCacheMiB, readerCacheMiB: tuning.readerCacheMiB,
                checkpointPages: tuning.checkpointPages, converting: converting)
        case .postgres(let url):
            return try PostgresStore(url: url)
        case .unknown(let scheme):
            throw UsageError(
                "--db names a \(TerminalText.escaped(scheme)):// URL, which no store engine reads: give the "
                    + "path of an SQLite file or a postgres:// URL")
        }
    }

    /// `pushtrace sql`'s statement, read-only, without opening the store for writing: an SQLite file is opened
    /// read-only (no migration, no `-wal` left behind), so a query never changes the file it reads.
    func query(_ sql: String, columns: ([String]) throws -> Void, row: ([QueryValue]) throws -> Void) throws {
        switch self {
        case .sqlite(let path): try SQLiteStore.query(path: path, sql: sql, columns: columns, row: row)
        case .postgres, .unknown:
            let store = try open()
            defer { try? store.close() }
            try store.readOnlyQuery(sql, columns: columns, row: row)
        }
    }

    /// Whether the store exists already (a command that only reads refuses to create one).
    var exists: Bool {
        switch self {
        case .sqlite(let path): FileManager.default.fileExists(atPath: path)
        case .postgres, .unknown: true
        }
    }
}
