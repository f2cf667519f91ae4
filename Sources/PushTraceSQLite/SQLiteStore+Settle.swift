import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// Diagnoses every notification whose summary changed since it was last diagnosed, and stores its primary
    /// cause in the summary (for `search` and reports). Returns how many were settled.
    ///
    /// Diagnosis runs on every core through concurrent WAL readers: each reads the summary, and the records only when
    /// the summary cannot tell (``Settling``). The causes are written
    /// by the one writer. A notification that received new records meanwhile keeps its pending mark for the next call.
    ///
    /// - Parameters:
    ///   - limit: settle at most this many (the server settles in small steps between commits); nil for all.
    ///   - progress: called once the pending notifications are counted (with 0 settled) and after each batch, with
    ///     the number settled so far and the number there were. On a store larger than the page cache a batch can
    ///     take minutes of disk reads, so the first call says that diagnosis has begun and how much there is.
    @discardableResult
    public func settleCauses(limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?) throws -> Int {
        // The pending keys, once, in device order: the order causes are written in, which decides each rollup
        // row's example (the last notification settled into it).
        let pending = try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT app_id, notification_id, first_ts FROM notification WHERE cause IS NULL
                    ORDER BY app_id, device_id LIMIT ?
                    """, arguments: [limit ?? -1]
            ).map {
                PendingKey(appID: $0[0], notificationID: $0[1], firstTs: $0[2] ?? 0)
            }
        }
        if !pending.isEmpty { progress?(0, pending.count) }
        let diagnoser = Diagnoser(settings: settings)
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
        let batches = stride(from: 0, to: pending.count, by: batchSize).map { pending[$0..<min($0 + batchSize, pending.count)] }
        // Diagnosing a batch (reads) overlaps with writing the causes of the one before (the writer).
        let diagnosed = BoundedQueue<Result<[Settled], any Error>>(capacity: 2)
        // Signalled when the diagnosing thread is done with its readers: settling returns only then, so that
        // closing the store right after finds every connection free (and checkpoints and removes the log).
        let finished = DispatchSemaphore(value: 0)
        let diagnosing = Thread { [pool, dictionaries] in
            Thread.current.name = "pt-diagnose"
            defer { finished.signal() }
            for keys in batches where !diagnosed.isClosed {
                // Diagnosed in the order the notifications began, each lane a contiguous run of time: a backend's
                // block holds the `push.sent` lines of the notifications sent together, which are then read from
                // one decoded block. The causes go back in the batch's order.
                let byTime = keys.indices.sorted { (keys[$0].firstTs, $0) < (keys[$1].firstTs, $1) }
                let results = ConcurrentResults<[(Int, Settled)]>(count: lanes)
                let lane = (byTime.count + lanes - 1) / lanes
                DispatchQueue.concurrentPerform(iterations: lanes) { index in
                    let slice = byTime.dropFirst(index * lane).prefix(lane)
                    results.store(
                        index,
                        Result {
                            try pool.read { db in
                                // Read here, not with the keys: a summary may have changed since, or been settled.
                                var positions: [Int] = []
                                var unsettled: [Unsettled] = []
                                for at in slice {
                                    let key = keys[at]
                                    guard
                                        let stored = try NotificationFacts.read(
                                            db, appID: key.appID, notificationID: key.notificationID),
                                        stored.cause == nil
                                    else { continue }
                                    positions.append(at)
                                    unsettled.append(
                                        Unsettled(
                                            key: NotificationRowKey(appID: key.appID, notificationID: key.notificationID),
                                            facts: stored.facts))
                                }
                                let reader = DiagnosisReader(db, dictionaries: dictionaries)
                                return Array(
                                    zip(positions, try Settling.decide(unsettled, diagnoser: diagnoser, source: reader)))
                            }
                        })
                }
                diagnosed.push(
                    Result {
                        try results.all().flatMap { $0 }.sorted { $0.0 < $1.0 }.map(\.1)
                    })
            }
        }
        diagnosing.stackSize = 1 << 20
        diagnosing.start()
        defer {
            diagnosed.close()
            finished.wait()
        }
        var done = 0
        // The causes are written in transactions of up to two seconds, as ingest groups its bundles: every commit
        // rewrites the notification pages its batch touched (random keys: most of them), so fewer commits write far
        // fewer log frames. Readers see each group once it commits.
        try pool.writeWithoutTransaction { db in
            let rollups = RollupDeltas()
            var groupStart: Date?
            do {
                for _ in batches {
                    let causes = try diagnosed.pop().get()
                    if groupStart == nil {
                        try db.beginTransaction(.immediate)
                        groupStart = Date()
                    }
                    done += try SQLiteSession(db: db).writeCauses(causes, rollups: rollups)
                    if let started = groupStart, Date().timeIntervalSince(started) >= 2 {
                        try rollups.write(db)
                        try db.commit()
                        groupStart = nil
                    }
                    progress?(done, pending.count)
                }
                if groupStart != nil {
                    try rollups.write(db)
                    try db.commit()
                }
            } catch {
                if db.isInsideTransaction { try? db.rollback() }
                throw error
            }
        }
        return done
    }
}

private struct PendingKey: Sendable {
    var appID: String
    var notificationID: String
    var firstTs: Int64
}

/// Results of concurrent work, one slot per lane, filled from several threads.
final class ConcurrentResults<Value>: @unchecked Sendable {
    private var slots: [Result<Value, any Error>?]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func store(_ lane: Int, _ result: Result<Value, any Error>) {
        lock.withLock { slots[lane] = result }
    }

    /// Every lane's value in order (the first error, if any lane failed).
    func all() throws -> [Value] {
        try lock.withLock { try slots.map { try $0!.get() } }
    }
}
