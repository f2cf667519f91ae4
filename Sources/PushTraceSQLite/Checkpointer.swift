import Foundation
import GRDB
import GRDBSQLite
import PushTraceStore

/// Copies the write-ahead log back into the database file off the writer's thread, so that the writer never does.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: the writer then copies every
/// page of the log into the database file and waits for its fsync while every bundle in the next group waits for
/// the writer. Here the writer's WAL hook only queues a `PASSIVE` checkpoint on a serial queue of the
/// checkpointer's, over a connection of its own: it copies what no reader still needs and never blocks the writer or
/// a reader (SQLite's advice for applications that must not stall on checkpoints). Should the log still outgrow
/// ``backstopPages`` (a reader holding an old snapshot, a checkpoint slower than the writer), the writer
/// checkpoints inline as SQLite would.
final class Checkpointer: @unchecked Sendable {
    /// Log pages after which a checkpoint is started.
    let thresholdPages: Int32
    /// Log pages after which the writer checkpoints itself rather than let the log grow further.
    let backstopPages: Int32

    private let path: String
    private let synchronous: String
    private let lock = NSLock()
    private var state = State()
    // Runs the checkpoints one at a time; `connection` is touched only on it.
    private let queue = DispatchQueue(label: "pt-checkpointer")
    private var connection: OpaquePointer?

    private struct State {
        /// Until ``start()``, growth is only noted: the store is still being opened.
        var started = false
        var stopped = false
        /// A checkpoint is queued and has not begun: more growth needs no other.
        var queued = false
        var grewBeforeStart = false
        /// The hook's reference, released once the writer's connection is closed.
        var hookReference: Unmanaged<Checkpointer>?
    }

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
        withState { $0.hookReference = reference }
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, connection, _, pages in
                let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context!).takeUnretainedValue()
                return checkpointer.logGrew(to: pages, on: connection)
            }, reference.toOpaque())
    }

    /// Releases the hook's reference once the writer's connection, and with it the hook, is gone.
    func writerClosed() {
        withState { $0.hookReference.take() }?.release()
    }

    /// Lets checkpoints run, starting with one for growth noted while the store was opened.
    func start() {
        let grew = withState { state in
            state.started = true
            state.queued = state.grewBeforeStart && !state.stopped
            return state.queued
        }
        if grew { queueCheckpoint() }
    }

    /// Lets a running checkpoint end and closes the connection; later growth is checkpointed by the writer.
    func stop() {
        withState { $0.stopped = true }
        queue.sync {
            sqlite3_close_v2(connection)
            connection = nil
        }
    }

    private func logGrew(to pages: Int32, on connection: OpaquePointer?) -> Int32 {
        guard pages >= thresholdPages else { return SQLITE_OK }
        enum Step { case none, queue, inline }
        let step = withState { state -> Step in
            if state.stopped || pages >= backstopPages { return .inline }
            guard state.started else {
                state.grewBeforeStart = true
                return .none
            }
            if state.queued { return .none }
            state.queued = true
            return .queue
        }
        switch step {
        case .none: break
        case .queue: queueCheckpoint()
        // Errors are SQLite's own automatic checkpoint's: a busy checkpoint is retried after the next commit.
        case .inline: sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
        return SQLITE_OK
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.withLock { body(&state) }
    }

    private func queueCheckpoint() {
        queue.async { [self] in
            let stopped = withState { state in
                state.queued = false
                return state.stopped
            }
            if stopped { return }
            // The queue's threads are shared: one is named while it checkpoints, for top -H and perf.
            let thread = Thread.current
            let name = thread.name
            thread.name = "pt-checkpointer"
            defer { thread.name = name }
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
