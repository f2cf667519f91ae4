import Foundation
import GRDB
import PushTraceCore
import PushTraceStore

#if canImport(Glibc)
    import Glibc
#endif

/// The pushtrace database: one SQLite file in WAL mode, read by many, written by one.
///
/// Every bundle is stored atomically (a transaction of its own, or a savepoint in a group commit), so a bundle is
/// either wholly stored or not at all.
public final class SQLiteStore: Sendable {
    /// How hard a commit works to survive failures (`PRAGMA synchronous`).
    public enum Durability: String, Sendable, CaseIterable {
        /// WAL with `synchronous = NORMAL`: a committed bundle survives the process being killed; the last
        /// commits may be lost if the machine loses power.
        case normal
        /// `synchronous = FULL`: a committed bundle also survives power loss, at the cost of an fsync per commit.
        case full
    }

    /// The page size of new database files. SQLite's default of 4 KiB stores a block of a few hundred compressed
    /// lines (a backend's `push.sent` lines) on a page and an overflow page mostly left empty; larger pages hold it
    /// whole beside smaller rows. Files made before keep theirs: in WAL mode SQLite cannot change it.
    static let pageSize = 8_192

    /// Where the database lives.
    public let path: String
    /// The connections (one writer, concurrent readers).
    let pool: DatabasePool
    /// The thresholds used when causes are settled.
    public let settings: DiagnosisSettings
    /// The record blocks' dictionaries; a bundle's first block is the one its row names.
    let dictionaries = BlockDictionaries(layout: .sqlite)
    private let checkpointer: Checkpointer

    /// Opens (creating and migrating when needed) the database at `path`.
    ///
    /// - Parameters:
    ///   - busyTimeout: how long a write waits for another process's lock before it fails.
    ///   - writerCacheMiB: the writer's page cache; bulk ingest gains from a large one, a server's small commits
    ///     need less.
    ///   - readerCacheMiB: each reader's page cache; diagnosing a whole corpus gains from a larger one, a server
    ///     answering single notifications needs less.
    ///   - converting: told how far the conversion of a store an older pushtrace wrote (a row per record) into
    ///     record blocks has gone, after each of its transactions; not called when there is nothing to convert.
    ///   - checkpointPages: log pages after which they are copied back into the database file (SQLite's default
    ///     is 1,000). A server's many small commits rewrite the same index pages again and again, and checkpointing
    ///     less often copies and syncs each of them once for many commits; a bulk ingest's diagnosis, whose
    ///     readers look pages up in the log, does better with the default.
    public init(
        path: String, durability: Durability = .normal, settings: DiagnosisSettings = .default,
        busyTimeout: TimeInterval = 10, writerCacheMiB: Int = 64, readerCacheMiB: Int = 8,
        checkpointPages: Int = 1_000, converting: ((ConversionProgress) -> Void)? = nil
    ) throws {
        self.path = path
        self.settings = settings
        let checkpointer = Checkpointer(path: path, durability: durability, thresholdPages: Int32(clamping: checkpointPages))
        self.checkpointer = checkpointer
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        config.prepareDatabase { db in
            // The writer's larger page cache keeps a group commit's dirty pages in memory instead of spilling them
            // mid-transaction; readers (one per core, more under a server's concurrent reads) need much less.
            try db.execute(sql: "PRAGMA cache_size = -\((db.configuration.readonly ? readerCacheMiB : writerCacheMiB) * 1024)")
            // Each bundle is a savepoint inside a group commit; its rollback journal then lives in memory, not a temp file.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            if !db.configuration.readonly {
                // In a new file, before GRDB turns WAL on and the first table exists (later it would take a rebuild,
                // and setting it writes, so it would wait for another process's lock): `vacuum` can then give
                // deleted rows' pages back to the file system in place, instead of rebuilding the file beside itself.
                if try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 {
                    try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                    try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)")
                }
                checkpointer.install(on: db)
            }
        }
        Self.createPrivately(path)
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // Here, not in `prepareDatabase`: GRDB sets the writer to NORMAL when it turns WAL on, after that.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            }
            try Self.migrate(pool, path: path)
        } catch {
            throw StoreError.opening(path, error)
        }
        do {
            try Self.convertRecordsToBlocks(
                pool,
                progress: converting.map { tell in
                    {
                        tell($0)
                        return true
                    }
                })
        } catch {
            throw StoreError.explaining(error, path: path)
        }
        try recoverSummariesLeftBehind()
        checkpointer.start()
    }

    deinit {
        checkpointer.stop()
    }

    /// Brings the schema up to date, unless the file is another program's SQLite database (pushtrace's tables do
    /// not belong in it) or a newer pushtrace has migrated it past what this one knows (writing through a schema it
    /// does not know would store what that version cannot read back). A migration an earlier build released and this
    /// one withdrew (``Schema/withdrawn``) is undone first.
    private static func migrate(_ pool: DatabasePool, path: String) throws {
        let migrator = Schema.migrator
        let (applied, tables) = try pool.read { db in
            (
                try migrator.appliedIdentifiers(db),
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            )
        }
        if applied.isEmpty, !tables.isEmpty { throw StoreError.otherDatabase(path, tables: tables) }
        let withdrawn = Schema.withdrawn.filter { applied.contains($0.name) }
        let unknown = applied.subtracting(migrator.migrations).subtracting(withdrawn.map(\.name))
        guard unknown.isEmpty else { throw StoreError.newerSchema(path, migrations: unknown.sorted()) }
        // Undone before the migrations the store lacks, each with its name in one transaction: a store that stops
        // in between is one that never ran it. Only by the process that removes the name, inside the transaction: another
        // may have undone it since the read above, and migrated further.
        for migration in withdrawn {
            try pool.write { db in
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [migration.name])
                guard db.changesCount > 0 else { return }
                for statement in migration.undo { try db.execute(sql: statement) }
            }
        }
        try migrator.migrate(pool)
    }

    /// Checkpoints the WAL into the database file and closes every connection; the store cannot be used afterwards.
    public func close() throws {
        checkpointer.stop()
        // GRDB closes the writer before the readers, and a read-only last connection does not checkpoint: do it here.
        try pool.writeWithoutTransaction { _ = try $0.checkpoint(.truncate) }
        // The readers closed first: the writer, closing last, then removes the log and the shared-memory file
        // (when no other process has the database open).
        pool.invalidateReadOnlyConnections()
        try pool.close()
        checkpointer.writerClosed()
    }

    /// The last migration this version of pushtrace knows: a database migrated past it was written by a newer one.
    public static let schemaVersion = Schema.migrator.migrations.last ?? ""

    /// Runs `body` on a read-only connection (``openReadOnly(path:)``), and leaves the folder as it found it.
    ///
    /// Any reader of a WAL database makes SQLite create its `-wal` and `-shm` files, and only a connection that can
    /// write removes them, as the last one to close. So when they were not there before, a writable connection
    /// reads nothing and closes after the read-only one: the files go if nobody else has the store open, and stay
    /// (as they must) if a server or another command does.
    static func readingOnly<T>(path: String, _ body: (DatabaseQueue) throws -> T) throws -> T {
        let sidecars = ["-wal", "-shm"].map { path + $0 }
        let existed = sidecars.allSatisfy { FileManager.default.fileExists(atPath: $0) }
        let queue = try openReadOnly(path: path)
        defer {
            try? queue.close()
            if !existed, let writable = try? DatabaseQueue(path: path) {
                _ = try? writable.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
                try? writable.close()
            }
        }
        return try body(queue)
    }

    /// Creates the database file readable and writable by its owner only (0600, less what the umask takes away),
    /// before SQLite would create it world-readable: it holds every app's records and the tokens' hashes. SQLite
    /// gives the `-wal` and `-shm` files the database file's mode.
    static func createPrivately(_ path: String) {
        guard !path.isEmpty, !path.hasPrefix(":"), !path.hasPrefix("file:") else { return }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Opens an existing database for reading only; nothing can be written through it.
    static func openReadOnly(path: String) throws -> DatabaseQueue {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.missingDatabase(path)
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(10)
        do { return try DatabaseQueue(path: path, configuration: config) } catch { throw StoreError.opening(path, error) }
    }
}
