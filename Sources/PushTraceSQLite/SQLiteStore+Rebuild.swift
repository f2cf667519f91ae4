import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
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
        return RebuildRoom(
            liveBytes: liveBytes, temporaryDirectory: temporary, freeBesideDatabase: besideDatabase,
            freeInTemporaryDirectory: shared ? nil : try free(temporary))
    }

    /// Rebuilds the database file to give the space of deleted rows back to the file system (`VACUUM`), then
    /// empties the log, which the rebuild filled with the whole file. It needs an exclusive lock for its whole run:
    /// writers wait (the server answers 503 past its busy timeout). The copy is built in a temporary file, not in
    /// memory; when ``rebuildRoom()`` says the disk lacks room for it and the log, nothing is started and
    /// ``StoreError/noRoomToRebuild(_:_:)`` says what is missing; otherwise `starting` is told the room, and the
    /// rebuild begins. A store an older pushtrace created comes out of it able to release pages in place.
    public func vacuum(starting: ((RebuildRoom) -> Void)?) throws {
        let room = try rebuildRoom()
        if let shortfall = room.shortfall { throw StoreError.noRoomToRebuild(path, shortfall) }
        starting?(room)
        do {
            try pool.barrierWriteWithoutTransaction { db in
                try db.execute(sql: "PRAGMA temp_store = FILE")
                defer { try? db.execute(sql: "PRAGMA temp_store = MEMORY") }
                // A store an older pushtrace created takes it now, and releases pages in place from then on.
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "VACUUM")
                // Without this the log keeps the rebuilt file's size on disk for as long as the database is open
                // (a server's).
                try Self.emptyLog(db)
            }
        } catch {
            throw StoreError.explaining(error, path: path)
        }
    }

    /// Whether the pages of deleted rows can be given back in place (``releaseFreePages(pagesPerStep:progress:)``):
    /// true of every store this version created (`auto_vacuum = INCREMENTAL`), and of an older one once rebuilt.
    public func releasesInPlace() throws -> Bool {
        try pool.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") } == 2
    }

    /// Gives the pages of deleted rows back to the file system in place: SQLite moves pages from the end of the
    /// file into the free ones and truncates it (`PRAGMA incremental_vacuum`). No copy of the file is made, so it
    /// needs no free disk beyond the log; each step moves at most `pagesPerStep` pages in a write transaction of its
    /// own, so ingest goes on between steps. Unlike ``vacuum(starting:)`` it does not defragment what stays.
    ///
    /// `progress` is told, after each step, the bytes released so far (the file's shrinking: the free pages, and
    /// the pointer-map pages that described them) and the free bytes still to go; returning false stops there (what
    /// was released stays released). Returns the bytes released. Does nothing on a store that cannot release in
    /// place (``releasesInPlace()`` false).
    @discardableResult
    public func releaseFreePages(
        pagesPerStep: Int,
        progress: ((_ released: Int64, _ toGo: Int64) -> Bool)?
    ) throws -> Int64 {
        guard try releasesInPlace() else { return 0 }
        let pageSize = try pool.read { try Int64.fetchOne($0, sql: "PRAGMA page_size") ?? 4_096 }
        var released: Int64 = 0
        do {
            while true {
                let (shrunk, free) = try pool.writeWithoutTransaction { db in
                    let before = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                    try db.execute(sql: "PRAGMA incremental_vacuum(\(max(1, pagesPerStep)))")
                    return (
                        before - (try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0),
                        try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                    )
                }
                released += shrunk * pageSize
                // Nothing moved: no free page is left (ingest meanwhile may have reused some).
                if shrunk == 0 { break }
                if progress?(released, free * pageSize) == false { return released }
            }
            // The file shrinks when the log is copied back; then the log itself is emptied.
            try pool.writeWithoutTransaction { try Self.emptyLog($0) }
        } catch {
            throw StoreError.explaining(error, path: path)
        }
        return released
    }

    /// Copies the whole log back into the database file, which then shrinks to its pages, and empties the log
    /// (`wal_checkpoint(TRUNCATE)`). The checkpointer's own checkpoint, if one is running, makes SQLite answer busy
    /// at once rather than wait: this tries again for up to 5 s. A reader busy for longer only delays it (SQLite
    /// answers, it does not fail); a later checkpoint then copies the rest, and the log is reused.
    static func emptyLog(_ db: Database) throws {
        for _ in 0..<100 {
            guard let busy = try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)"), busy != 0 else { return }
            Thread.sleep(forTimeInterval: 0.05)
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
                files.isWritableFile(atPath: directory), files.isExecutableFile(atPath: directory)
            {
                return directory
            }
        }
        return "."
    }
}
