import Foundation
import GRDB
import PushTraceStore

extension StoreError {
    /// What opening the database at `path` failed with, said in the user's terms where the cause is theirs (the
    /// wrong file, a folder, permissions); any other error as it came.
    static func opening(_ path: String, _ error: any Error) -> any Error {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = files.fileExists(atPath: path, isDirectory: &isDirectory)
        // SQLite says "unable to open" of a folder when writing and "disk I/O error" when only reading.
        if exists, isDirectory.boolValue, error is DatabaseError { return StoreError.cannotOpen(path, reason: "it is a folder") }
        switch (error as? DatabaseError)?.resultCode {
        case .SQLITE_NOTADB?:
            return StoreError.notADatabase(path)
        case .SQLITE_CANTOPEN?:
            let folder = (path as NSString).deletingLastPathComponent
            if exists {
                if !files.isReadableFile(atPath: path) { return StoreError.cannotOpen(path, reason: "permission denied") }
            } else if !folder.isEmpty, !files.fileExists(atPath: folder) {
                return StoreError.cannotOpen(path, reason: "the folder \(folder) does not exist")
            }
            if !files.isWritableFile(atPath: folder.isEmpty ? "." : folder) {
                return StoreError.cannotOpen(
                    path,
                    reason: "its folder is not writable (SQLite keeps the database's "
                        + "-wal and -shm files beside it)")
            }
            return error
        default:
            return explaining(error, path: path)
        }
    }

    /// `error`, met while using the database at `path`, in the user's terms where it has some: a lock another
    /// process held past the busy timeout is ``locked(_:)``, a full disk ``diskFull(_:)``, a read-only or failing
    /// file ``unavailable(_:reason:detail:)`` (every write would fail the same way); anything else as it came.
    public static func explaining(_ error: any Error, path: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let reason: String
        switch error.resultCode {
        case .SQLITE_BUSY: return StoreError.locked(path)
        case .SQLITE_FULL: return StoreError.diskFull(path)
        case .SQLITE_LOCKED: reason = "another process holds the database's write lock"
        case .SQLITE_READONLY: reason = "the database is read-only"
        case .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL, .SQLITE_NOMEM:
            reason = "the database failed (SQLite error \(error.resultCode.rawValue); the server's log says more)"
        default: return error
        }
        return StoreError.unavailable(path, reason: reason, detail: error.message)
    }
}
