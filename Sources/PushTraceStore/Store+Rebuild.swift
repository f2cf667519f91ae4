import Foundation
import GRDB

/// The disk room that rebuilding the database file (`VACUUM`) needs, and the room there is.
///
/// SQLite rebuilds a WAL database in two copies of what its rows still use: first into a temporary file (in
/// ``temporaryDirectory``), then back through the log beside the database. Both are about ``liveBytes``, so on one
/// file system the rebuild needs twice that free; the file itself shrinks only at the end.
public struct RebuildRoom: Sendable, Equatable {
    /// Bytes of the pages the rows still use: about the size of the rebuilt file, of its temporary copy, and of
    /// the log that carries the copy back.
    public var liveBytes: Int64
    /// Where SQLite builds the temporary copy: `SQLITE_TMPDIR`, else `TMPDIR`, else the first writable of
    /// /var/tmp, /usr/tmp, /tmp and the working directory (SQLite's own order).
    public var temporaryDirectory: String
    /// Free bytes on the database's file system.
    public var freeBesideDatabase: Int64
    /// Free bytes on the temporary directory's file system, or nil when it is the database's.
    public var freeInTemporaryDirectory: Int64?

    public init(liveBytes: Int64, temporaryDirectory: String, freeBesideDatabase: Int64, freeInTemporaryDirectory: Int64?) {
        self.liveBytes = liveBytes
        self.temporaryDirectory = temporaryDirectory
        self.freeBesideDatabase = freeBesideDatabase
        self.freeInTemporaryDirectory = freeInTemporaryDirectory
    }

    /// What is missing, in words, or nil when the rebuild fits. A margin of 2 % covers the log's frame headers.
    public var shortfall: String? {
        let copy = liveBytes + liveBytes / 50
        if let freeInTemporaryDirectory {
            var missing: [String] = []
            if freeInTemporaryDirectory < copy {
                missing.append("\(Self.megabytes(copy)) MB for the temporary copy in \(temporaryDirectory), where "
                               + "\(Self.megabytes(freeInTemporaryDirectory)) MB are free")
            }
            if freeBesideDatabase < copy {
                missing.append("\(Self.megabytes(copy)) MB for the log beside the database, where "
                               + "\(Self.megabytes(freeBesideDatabase)) MB are free")
            }
            return missing.isEmpty ? nil : "rebuilding needs " + missing.joined(separator: ", and ")
        }
        guard freeBesideDatabase < 2 * copy else { return nil }
        return "rebuilding needs \(Self.megabytes(2 * copy)) MB free (a temporary copy of the \(Self.megabytes(liveBytes)) "
            + "MB still in use, in \(temporaryDirectory), and the log that carries it back), and "
            + "\(Self.megabytes(freeBesideDatabase)) MB are"
    }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
}

extension Store {
    /// The room ``vacuum()`` needs and has now.
    public func rebuildRoom() throws -> RebuildRoom {
        let liveBytes = try pool.read { db in
            let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4_096
            let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let freePages = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            return (pages - freePages) * pageSize
        }
        let folder = (path as NSString).deletingLastPathComponent
        let databaseFolder = folder.isEmpty ? "." : folder
        let temporary = Self.temporaryDirectory()
        let files = FileManager.default
        func free(_ path: String) throws -> Int64 {
            (try files.attributesOfFileSystem(forPath: path)[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
        }
        func device(_ path: String) -> UInt64? {
            (try? files.attributesOfItem(atPath: path)[.systemNumber] as? NSNumber)?.uint64Value
        }
        let besideDatabase = try free(databaseFolder)
        let shared = device(databaseFolder) != nil && device(databaseFolder) == device(temporary)
        return RebuildRoom(liveBytes: liveBytes, temporaryDirectory: temporary, freeBesideDatabase: besideDatabase,
                           freeInTemporaryDirectory: shared ? nil : try free(temporary))
    }

    /// Rebuilds the database file to give the space of deleted rows back to the file system (`VACUUM`), then
    /// empties the log, which the rebuild filled with the whole file. It needs an exclusive lock for its whole run:
    /// writers wait (the server answers 503 past its busy timeout). The copy is built in a temporary file, not in
    /// memory; when ``rebuildRoom()`` says the disk lacks room for it and the log, nothing is started and
    /// ``StoreError/noRoomToRebuild(_:_:)`` says what is missing; otherwise `starting` is told the room, and the
    /// rebuild begins.
    public func vacuum(starting: ((RebuildRoom) -> Void)? = nil) throws {
        let room = try rebuildRoom()
        if let shortfall = room.shortfall { throw StoreError.noRoomToRebuild(path, shortfall) }
        starting?(room)
        do {
            try pool.barrierWriteWithoutTransaction { db in
                try db.execute(sql: "PRAGMA temp_store = FILE")
                defer { try? db.execute(sql: "PRAGMA temp_store = MEMORY") }
                try db.execute(sql: "VACUUM")
                // Without this the log keeps the rebuilt file's size on disk for as long as the database is open
                // (a server's). It may find a reader still busy (it then answers, it does not fail): the log is
                // then emptied by a later checkpoint, and reused.
                _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch {
            throw StoreError.explaining(error, path: path)
        }
    }

    /// The directory SQLite's unix VFS puts temporary files in, found as it finds it.
    static func temporaryDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        let candidates = [environment["SQLITE_TMPDIR"], environment["TMPDIR"], "/var/tmp", "/usr/tmp", "/tmp"]
        let files = FileManager.default
        for case let directory? in candidates {
            var isDirectory: ObjCBool = false
            if files.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
               files.isWritableFile(atPath: directory), files.isExecutableFile(atPath: directory) {
                return directory
            }
        }
        return "."
    }
}
