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

        /// Whether the storage cannot take work now, rather than that this work failed: trying again later can
        /// succeed, and trying other work now would only fail the same way.
        public var isUnavailable: Bool {
            [.locked, .diskFull, .unavailable, .noAnswer, .closed].contains(self)
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
        }
    }
}
