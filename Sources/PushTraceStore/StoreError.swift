import Foundation

/// The store's one error type, whatever the engine: failures a user can act on, each with its ``code``. An engine
/// translates its driver's errors into it (``StoreAccess/explaining(_:)``); what a code means to an HTTP client is
/// decided once, by the server.
public enum StoreError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Nothing at the path, for a command that only reads.
    case missingDatabase(String)
    /// The file is not an SQLite database (a bundle, a text file, an encrypted or damaged file).
    case notADatabase(String)
    /// A database of another program: tables, but none of pushtrace's migrations.
    case otherDatabase(String, tables: [String])
    /// The file cannot be opened or created; the reason says why.
    case cannotOpen(String, reason: String)
    /// A newer pushtrace has applied migrations this one does not know.
    case newerSchema(String, migrations: [String])
    /// Another process held the write lock for longer than the busy timeout.
    case locked(String)
    /// The disk (the database's, or SQLite's temporary directory's) filled up: the transaction was undone.
    case diskFull(String)
    /// `vacuum` was not started: the disk lacks the room the rebuild needs (what is missing, in words).
    case noRoomToRebuild(String, String)
    /// The database cannot take work now (unreachable, read-only, out of resources): `reason` is for any client,
    /// naming no path and no SQL; `detail`, the driver's own words, only for the operator's log.
    case unavailable(String, reason: String, detail: String?)
    /// A statement's answer did not come within the session's deadline: the connection was given up.
    case noAnswer(seconds: Int64)
    /// The store was closed, and then used.
    case closed(String)
    /// The database refused a statement, in its own words (an SQLSTATE, a message, a detail).
    case refused(String, state: String, message: String, detail: String?)
    /// A row or a stored line that does not hold what pushtrace writes (what was found): a bug, a schema this
    /// version does not know, or a damaged store.
    case damaged(String)
    /// The PostgreSQL URL `--db` names cannot be used (what is wrong with it).
    case badURL(String)

    // What a caller asked that the store cannot answer as asked.

    /// The notification ID is stored for several apps: the caller must say which.
    case ambiguousNotification(String, apps: [String])
    /// No notification of this app is stored (a misspelt bundle ID answers nothing, silently, otherwise).
    case unknownApp(String, known: [String])

    // Why `pushtrace sql`'s statement was not run.

    /// The statement would change the store.
    case wouldWrite
    /// The engine refused the statement (a syntax error, an unknown table), in its words.
    case invalidQuery(String)
    /// PostgreSQL: the role that may only read is missing, or the store's owner may not switch to it (its words).
    case noReader(String)
    /// PostgreSQL: the role that may only read (named) holds privileges of its own or is a member of another role,
    /// so switching to it could read or do more than the store's tables allow.
    case unsafeReader(String)
    /// PostgreSQL: the URL goes through a pooler in transaction mode, which would keep the statement's session
    /// settings for the next client of the server connection.
    case needsDirectConnection

    // Why a copy (``StoreCopy``) stopped.

    /// The target holds data already: a copy only fills an empty store.
    case copyTargetNotEmpty(String, table: String)
    /// A process keeps a summary backlog for the source (a running SQLite server).
    case copySourceBusy(String)
    /// A table's rows, counted in the source and the target after the copy, differ.
    case copyCountsDiffer(table: String, source: Int64, target: Int64)
    /// The target could not be checked or prepared, in the engine's words; nothing was written.
    case copyCannotStart(String, String)
    /// Reading the source or writing the target failed, in the engine's words; an SQLite target holds a partial
    /// copy, a PostgreSQL one (written in one transaction) nothing.
    case copyFailed(writing: Bool, String, String)

    /// What kind of failure this is, for callers that branch on it, without its words.
    public enum Code: String, Sendable, CaseIterable {
        case missingDatabase = "missing_database"
        case notADatabase = "not_a_database"
        case otherDatabase = "other_database"
        case cannotOpen = "cannot_open"
        case newerSchema = "newer_schema"
        case locked
        case diskFull = "disk_full"
        case noRoomToRebuild = "no_room_to_rebuild"
        case unavailable
        case noAnswer = "no_answer"
        case closed
        case refused
        case damaged
        case badURL = "bad_url"
        case ambiguousNotification = "ambiguous_notification"
        case unknownApp = "unknown_app"
        case wouldWrite = "would_write"
        case invalidQuery = "invalid_query"
        case noReader = "no_reader"
        case unsafeReader = "unsafe_reader"
        case needsDirectConnection = "needs_direct_connection"
        case copyTargetNotEmpty = "copy_target_not_empty"
        case copySourceBusy = "copy_source_busy"
        case copyCountsDiffer = "copy_counts_differ"
        case copyCannotStart = "copy_cannot_start"
        case copyFailed = "copy_failed"

        /// Whether the storage cannot take work now, rather than that this work failed: trying again later can
        /// succeed, and trying other work now would only fail the same way.
        public var isUnavailable: Bool {
            [.locked, .diskFull, .unavailable, .noAnswer, .closed].contains(self)
        }

        /// Why a copy stopped: said to its user as it is, never wrapped in another copy failure.
        public var isCopy: Bool {
            [.copyTargetNotEmpty, .copySourceBusy, .copyCountsDiffer, .copyCannotStart, .copyFailed].contains(self)
        }
    }

    public var code: Code {
        switch self {
        case .missingDatabase: .missingDatabase
        case .notADatabase: .notADatabase
        case .otherDatabase: .otherDatabase
        case .cannotOpen: .cannotOpen
        case .newerSchema: .newerSchema
        case .locked: .locked
        case .diskFull: .diskFull
        case .noRoomToRebuild: .noRoomToRebuild
        case .unavailable: .unavailable
        case .noAnswer: .noAnswer
        case .closed: .closed
        case .refused: .refused
        case .damaged: .damaged
        case .badURL: .badURL
        case .ambiguousNotification: .ambiguousNotification
        case .unknownApp: .unknownApp
        case .wouldWrite: .wouldWrite
        case .invalidQuery: .invalidQuery
        case .noReader: .noReader
        case .unsafeReader: .unsafeReader
        case .needsDirectConnection: .needsDirectConnection
        case .copyTargetNotEmpty: .copyTargetNotEmpty
        case .copySourceBusy: .copySourceBusy
        case .copyCountsDiffer: .copyCountsDiffer
        case .copyCannotStart: .copyCannotStart
        case .copyFailed: .copyFailed
        }
    }

    /// Why the storage cannot take work now, in words a client of the server can act on, without paths or SQL; nil
    /// unless ``Code/isUnavailable``.
    public var clientReason: String? {
        switch self {
        case .locked: "another process holds the database's write lock"
        case .diskFull: "the server's disk is full"
        case .unavailable(_, let reason, _): reason
        case .noAnswer: "the database gave no answer in time: try again shortly"
        case .closed: "the server is shutting down"
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .missingDatabase(let path):
            return "no database at \(path): ingest bundles first (pushtrace ingest --db \(path) FILE…)"
        case .notADatabase(let path):
            return "\(path) is not a pushtrace database (not an SQLite file): --db names the file pushtrace ingest wrote"
        case .otherDatabase(let location, let tables):
            let named = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
            return "\(location) holds another program's tables (\(named)) and none of pushtrace's: pushtrace leaves "
                + "it as it is; give pushtrace a file or database of its own (CREATE DATABASE pushtrace)"
        case .cannotOpen(let path, let reason):
            return "cannot open the database \(path): \(reason)"
        case .newerSchema(let path, let migrations):
            return "\(path) was written by a newer pushtrace (schema \(migrations.joined(separator: ", ")), which this "
                + "version does not know): use that version or a later one; this one leaves the file as it is"
        case .locked(let path):
            return "\(path) is locked: another process kept writing to it past the busy timeout (a pushtrace serve or "
                + "ingest on the same file?); try again once it is done"
        case .diskFull(let path):
            return "the disk is full (\(path)'s, or that of SQLite's temporary directory, SQLITE_TMPDIR): the "
                + "transaction that needed the room was undone; what was committed before it stays"
        case .noRoomToRebuild(let path, let shortfall):
            return "\(path) was not rebuilt: \(shortfall). Free some space, set SQLITE_TMPDIR to a disk with room "
                + "for the copy, or delete more first (--retention)"
        case .unavailable(let location, let reason, let detail):
            return "\(location): \(reason)" + (detail.map { " (\($0))" } ?? "")
        case .noAnswer(let seconds):
            return "the database gave no answer within \(seconds) s: the connection was closed"
        case .closed(let location):
            return "the store \(location) was closed"
        case .refused(let location, let state, let message, let detail):
            return "\(location): the database refused a statement (\(state)): \(message)" + (detail.map { " (\($0))" } ?? "")
        case .damaged(let what):
            return what
        case .badURL(let reason):
            return "the PostgreSQL URL given to --db: \(reason)"
        case .ambiguousNotification(let id, let apps):
            return "notification \(id) is stored for \(apps.count) apps: " + apps.joined(separator: ", ")
        case .unknownApp(let app, let known):
            return "no notifications of app \(app) are stored; apps: "
                + (known.isEmpty ? "none yet" : known.joined(separator: ", "))
        case .wouldWrite:
            return "the statement would change the store: pushtrace sql only reads"
        case .invalidQuery(let message):
            return message
        case .noReader(let message):
            return "the role that may only read cannot be used: \(message)"
        case .unsafeReader(let role):
            return "the role \(role) may do more than read the store's tables"
        case .needsDirectConnection:
            return "the URL goes through a pooler in transaction mode: connect to PostgreSQL directly"
        case .copyTargetNotEmpty(let location, let table):
            return "\(location) holds data already (its \(table) table is not empty): copy into a new file or an "
                + "empty database; nothing was written"
        case .copySourceBusy(let location):
            return "a pushtrace serve is running on \(location) (it keeps what it stored last in memory a moment before "
                + "writing all of it): stop it, then copy"
        case .copyCountsDiffer(let table, let source, let target):
            return "after the copy, \(table) holds \(target) rows in the target and \(source) in the source"
        case .copyCannotStart(let location, let reason):
            return "\(location) could not be made ready for the copy: \(reason). Nothing was written"
        case .copyFailed(let writing, let location, let reason):
            return (writing ? "writing the copy into \(location) failed: \(reason)" : "reading \(location) failed: \(reason)")
                + ". An SQLite target holds a partial copy (a PostgreSQL one, written in one transaction, holds nothing): "
                + "copy again into a new file or an empty database"
        }
    }
}

extension StoreError {
    /// A row without the column `name` (it has `names`).
    static func noColumn(_ name: String, _ names: [String]) -> StoreError {
        .damaged("the answer has no column \(name) (it has \(names.joined(separator: ", ")))")
    }

    /// A column `name` holding `found` where `expected` was.
    static func wrongType(_ name: String, expected: String, found: SQLValue) -> StoreError {
        .damaged("column \(name) holds \(found), not \(expected)")
    }

    /// A statement that answered no row where one was certain (what was looked for).
    static func noRow(_ what: String) -> StoreError { .damaged("no row answered for \(what)") }

    /// A stored line that is not a JSON object.
    static let notAnObject = StoreError.damaged("a stored record body is not a JSON object")
}
