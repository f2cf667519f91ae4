import Foundation
import GRDB
import PushTraceRecords
import PushTraceStore

/// The facts of committed bundles whose notification summaries are not written yet.
///
/// A server under load commits every few milliseconds, a handful of bundles each. When each of those commits
/// upserted its notifications, it rewrote pages of `notification` and of its three indexes at random places, and
/// wrote each of those pages to the log again: two-fifths of the log the server wrote. Its writer keeps each commit's
/// facts here instead, merged per notification, and writes them with ``SQLiteStore/writeSummaries(_:)`` in one
/// transaction a second or two later. The bundles themselves, their records included, are committed and
/// acknowledged at once; only the summaries (what search, reports and cause settling read) follow.
///
/// Nothing is lost if the process dies first: such a bundle is stored with `summarized = 0`, and the next process
/// to open the store rebuilds the facts of every such bundle from its stored records. While a backlog exists it
/// holds an exclusive `flock` on the file `DB-summaries` (released by the system when its process dies): that is
/// how another process tells a live backlog's bundles, which it must leave alone, from a dead one's.
///
/// Used by one thread (the writer's).
public final class SummaryBacklog {
    let pending = PendingSummaries()
    private(set) var bundles: [Int64] = []
    /// When the oldest facts waiting here were committed.
    private var since: ContinuousClock.Instant?
    /// Held, never read: the lock lasts as long as the backlog.
    private let lock: SummaryLock

    fileprivate init(lock: SummaryLock) {
        self.lock = lock
    }

    /// Whether every committed bundle's facts are written.
    public var isEmpty: Bool { bundles.isEmpty }

    /// Whether the oldest facts have waited `delay`, or facts of `notifications` notifications wait.
    public func isDue(after delay: Duration, notifications: Int) -> Bool {
        guard let since else { return false }
        return pending.count >= notifications || ContinuousClock.now - since >= delay
    }

    /// Takes in a committed group's facts.
    func add(_ summaries: PendingSummaries, bundles ids: [Int64]) {
        guard !ids.isEmpty else { return }
        if since == nil { since = .now }
        pending.absorb(summaries)
        bundles += ids
    }

    func removeAll() {
        pending.removeAll()
        bundles.removeAll()
        since = nil
    }
}

extension SQLiteStore {
    /// A backlog for this process's group commits, with the summaries any stopped process left unwritten written
    /// first; nil when another live process keeps a backlog for this database (then write summaries as you commit).
    public func makeSummaryBacklog() throws -> SummaryBacklog? {
        guard let lock = SummaryLock(databasePath: path) else { return nil }
        if try anySummariesLeft() { try recoverSummaries() }
        return SummaryBacklog(lock: lock)
    }

    /// Writes the summaries a stopped process left unwritten, unless a live process keeps a backlog.
    func recoverSummariesLeftBehind() throws {
        // Read first: opening a store must neither wait for the write lock nor create the lock file for nothing.
        guard try anySummariesLeft(), let lock = SummaryLock(databasePath: path) else { return }
        try withExtendedLifetime(lock) { try recoverSummaries() }
    }

    /// Writes the backlog's facts to the summaries and marks its bundles summarized, in one transaction, then
    /// empties it. When the transaction fails, the backlog is kept for the next attempt.
    public func writeSummaries(_ backlog: SummaryBacklog) throws {
        guard !backlog.isEmpty else { return }
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                try backlog.pending.write(db)
                let mark = try db.cachedStatement(sql: "UPDATE bundle SET summarized = 1 WHERE id = ?")
                for id in backlog.bundles { try mark.execute(arguments: [id]) }
                return .commit
            }
        }
        backlog.removeAll()
    }

    /// Writes the summaries of the bundles whose facts a process kept in its ``SummaryBacklog`` and never wrote
    /// (it was killed, or its disk was full), rebuilt from their stored lines in the order the bundles were
    /// stored. The caller holds the `DB-summaries` lock.
    private func recoverSummaries() throws {
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let bundles = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT u.id, u.app_id, u.bundle_id, u.device_id, c.app_version, c.os, u.first_block, u.last_block
                        FROM bundle u INDEXED BY bundle_unsummarized LEFT JOIN client c ON c.id = u.client_ref
                        WHERE u.summarized = 0 ORDER BY u.id
                        """)
                let pending = PendingSummaries()
                let reading = BlockReading(db, dictionaries: dictionaries)
                for bundle in bundles {
                    let appID: String = bundle["app_id"]
                    // What `NotificationFacts.add` reads of the manifest; a backend bundle's device is stored as NULL.
                    let manifest = Manifest(
                        bundleID: bundle["bundle_id"], appID: appID, appVersion: bundle["app_version"],
                        os: bundle["os"], deviceID: bundle["device_id"])
                    var facts: [String: NotificationFacts] = [:]
                    if let first: Int64 = bundle["first_block"], let last: Int64 = bundle["last_block"] {
                        try reading.forEachLine(
                            """
                            SELECT \(unsafeRaw: BlockReading<SQLiteSession>.columns) FROM record_block b
                            JOIN bundle u ON u.id = b.bundle_ref WHERE b.id BETWEEN \(first) AND \(last) ORDER BY b.id
                            """
                        ) { line in
                            guard let id = line.notificationID else { return }
                            facts[id, default: NotificationFacts()].add(line.record, ts: line.ts, manifest: manifest)
                        }
                    }
                    pending.merge(appID: appID, facts)
                }
                try pending.write(db)
                try db.execute(sql: "UPDATE bundle SET summarized = 1 WHERE summarized = 0")
                return .commit
            }
        }
    }
}

extension SQLiteStore {
    private func anySummariesLeft() throws -> Bool {
        try pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM bundle INDEXED BY bundle_unsummarized WHERE summarized = 0)")!
        }
    }
}

/// An exclusive, non-blocking `flock` on `DB-summaries`, held from its creation until it is released.
private final class SummaryLock {
    private let descriptor: Int32

    /// Nil when another open file description holds the lock (or the file cannot be opened).
    init?(databasePath: String) {
        descriptor = open(databasePath + "-summaries", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
    }

    deinit {
        close(descriptor)
    }
}

extension SQLiteStore {
    /// Runs `body` while no other process can keep a summary backlog for this store; nil, without running it, when
    /// a live process keeps one (a running `pushtrace serve`, whose acknowledged bundles' summaries exist only in it).
    func withoutLiveBacklog<T>(_ body: () throws -> T) throws -> T? {
        guard let lock = SummaryLock(databasePath: path) else { return nil }
        return try withExtendedLifetime(lock) { try body() }
    }
}
