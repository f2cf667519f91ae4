import Foundation
import GRDB
import GRDBSQLite
import PushTraceStore

/// Copies the write-ahead log back into the database file on a thread of its own, so that the writer never does.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: the writer then copies every
/// page of the log into the database file and waits for its fsync while every bundle in the next group waits for
/// the writer. Here the writer's WAL hook only wakes this thread, which runs a `PASSIVE` checkpoint over its own
/// connection: it copies what no reader still needs and never blocks the writer or a reader (SQLite's advice for
/// applications that must not stall on checkpoints). Should the log still outgrow ``backstopPages`` (a reader
/// holding an old snapshot, a checkpoint slower than the writer), the writer checkpoints inline as SQLite would.
final class Checkpointer: @unchecked Sendable {
    /// Log pages after which a checkpoint is started.
    let thresholdPages: Int32
    /// Log pages after which the writer checkpoints itself rather than let the log grow further.
    let backstopPages: Int32

    private let path: String
    private let synchronous: String
    // Guards `pending`, `stopped`, `running` and `hookReference`.
    private let condition = NSCondition()
    private var pending = false
    private var stopped = false
    private var running = false
    // The hook's reference, released once the writer's connection is closed.
    private var hookReference: Unmanaged<Checkpointer>?

    /// - Parameter thresholdPages: log pages after which a checkpoint is started (SQLite's own automatic
    ///   threshold is 1,000).
    init(path: String, durability: SQLiteStore.Durability, thresholdPages: Int32) {
        self.path = path
        self.thresholdPages = thresholdPages
        backstopPages = max(32_000, 2 * thresholdPages)
        synchronous = durability == .full ? "FULL" : "NORMAL"
    }

    /// Installs the WAL hook on the writer's connection, replacing SQLite's automatic checkpoint. The hook holds a
    /// reference to the checkpointer until ``writerClosed()``: a pool may outlive its store.
    func install(on db: Database) {
        let reference = Unmanaged.passRetained(self)
        condition.lock()
        hookReference = reference
        condition.unlock()
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, connection, _, pages in
                let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context!).takeUnretainedValue()
                return checkpointer.logGrew(to: pages, on: connection)
            }, reference.toOpaque())
    }

    /// Releases the hook's reference once the writer's connection, and with it the hook, is gone.
    func writerClosed() {
        condition.lock()
        let reference = hookReference
        hookReference = nil
        condition.unlock()
        reference?.release()
    }

    /// Starts the checkpointing thread.
    func start() {
        condition.lock()
        running = true
        condition.unlock()
        Thread {
            Thread.current.name = "pt-checkpointer"  // named for top -H and perf: 15 bytes at most on Linux
            self.loop()
        }.start()
    }

    /// Stops the thread and waits for it to close its connection; later growth is checkpointed by the writer.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func logGrew(to pages: Int32, on connection: OpaquePointer?) -> Int32 {
        guard pages >= thresholdPages else { return SQLITE_OK }
        condition.lock()
        let inline = stopped || pages >= backstopPages
        if !inline, !pending {
            pending = true
            condition.signal()
        }
        condition.unlock()
        if inline {
            // Errors are SQLite's own automatic checkpoint's: a busy checkpoint is retried after the next commit.
            sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
        return SQLITE_OK
    }

    private func loop() {
        var connection: OpaquePointer?
        defer {
            sqlite3_close_v2(connection)
            condition.lock()
            running = false
            condition.broadcast()
            condition.unlock()
        }
        while true {
            condition.lock()
            while !pending, !stopped { condition.wait() }
            pending = false
            let done = stopped
            condition.unlock()
            if done { return }
            if connection == nil { connection = open() }
            // PASSIVE never waits: what it cannot copy now is copied after the log grows again. Without a
            // connection of its own, the writer's backstop checkpoints instead.
            if let connection { sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) }
        }
    }

    private func open() -> OpaquePointer? {
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            sqlite3_close_v2(connection)
            return nil
        }
        // The checkpoint syncs the log before and the database after copying, as the writer's own would.
        sqlite3_exec(connection, "PRAGMA synchronous = \(synchronous)", nil, nil, nil)
        return connection
    }
}
