import Foundation

/// Failures of the store a user can act on.
public enum StoreError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Nothing at the path, for a command that only reads.
    case missingDatabase(String)
    /// The file is not an SQLite database (a bundle, a text file, an encrypted or damaged file).
    case notADatabase(String)
    /// An SQLite database of another program: tables, but none of pushtrace's migrations.
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

    public var description: String {
        switch self {
        case .missingDatabase(let path):
            return "no database at \(path): ingest bundles first (pushtrace ingest --db \(path) FILE…)"
        case .notADatabase(let path):
            return "\(path) is not a pushtrace database (not an SQLite file): --db names the file pushtrace ingest wrote"
        case .otherDatabase(let path, let tables):
            let named = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
            return "\(path) is an SQLite database, but not pushtrace's (it holds \(named)): pushtrace leaves it as it is"
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
        }
    }
}
