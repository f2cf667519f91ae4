import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// Diagnoses every notification whose summary changed since it was last diagnosed, and stores its primary
    /// cause in the summary (for `search` and reports), by the store's ``SettleLoop``. Returns how many were settled.
    ///
    /// - Parameters:
    ///   - limit: settle at most this many (the server settles in small steps between commits); nil for all.
    ///   - progress: called once the pending notifications are counted (with 0 settled) and after each batch, with
    ///     the number settled so far and the number there were.
    @discardableResult
    public func settleCauses(limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?) throws -> Int {
        try SettleLoop.run(
            SQLiteSettling(pool: pool, dictionaries: dictionaries), settings: settings, limit: limit,
            batchSize: batchSize, progress: progress)
    }
}

/// SQLite's part in settling: the waiting keys listed once from a snapshot, each batch diagnosed on every core
/// through concurrent WAL readers ahead of the one writer, and the causes written in transactions of up to two
/// seconds, as ingest groups its bundles. A notification that received records meanwhile keeps its pending mark for
/// the next call (``SQLSession/writeCauses(_:rollups:)``).
struct SQLiteSettling: SettleEngine {
    let pool: DatabasePool
    let dictionaries: BlockDictionaries

    /// The pending keys, once, in device order: the order causes are written in, which decides each rollup row's
    /// example (the last notification settled into it).
    func waiting(limit: Int?, batchSize: Int) throws -> (batches: [[PendingKey]], total: Int) {
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
        let batches = stride(from: 0, to: pending.count, by: batchSize).map {
            Array(pending[$0..<min($0 + batchSize, pending.count)])
        }
        return (batches, pending.count)
    }

    /// Diagnoses the batch in the order the notifications began, each lane a contiguous run of time: a backend's
    /// block holds the `push.sent` lines of the notifications sent together, which are then read from one decoded
    /// block. The causes go back in the batch's order.
    func prepare(_ keys: [PendingKey], diagnoser: Diagnoser) throws -> [Settled] {
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
        let byTime = keys.indices.sorted { (keys[$0].firstTs, $0) < (keys[$1].firstTs, $1) }
        let results = ConcurrentResults<[(Int, Settled)]>(count: lanes)
        let lane = (byTime.count + lanes - 1) / lanes
        DispatchQueue.concurrentPerform(iterations: lanes) { index in
            let slice = byTime.dropFirst(index * lane).prefix(lane)
            results.store(index, Result { try diagnose(slice.map { ($0, keys[$0]) }, diagnoser: diagnoser) })
        }
        return try results.all().flatMap { $0 }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// One lane's notifications diagnosed on one reader, each with its position in the batch.
    private func diagnose(_ slice: [(Int, PendingKey)], diagnoser: Diagnoser) throws -> [(Int, Settled)] {
        try pool.read { db in
            // Read here, not with the keys: a summary may have changed since, or been settled.
            var positions: [Int] = []
            var unsettled: [Unsettled] = []
            for (at, key) in slice {
                guard
                    let stored = try NotificationFacts.read(db, appID: key.appID, notificationID: key.notificationID),
                    stored.cause == nil
                else { continue }
                positions.append(at)
                unsettled.append(
                    Unsettled(
                        key: NotificationRowKey(appID: key.appID, notificationID: key.notificationID), facts: stored.facts))
            }
            let source = BlockReading(db, dictionaries: dictionaries)
            return Array(zip(positions, try Settling.decide(unsettled, diagnoser: diagnoser, source: source)))
        }
    }

    /// Decided already, outside the writer: one process writes, so nothing is claimed.
    func claim(_ prepared: [Settled], diagnoser: Diagnoser, in session: SQLiteSession) throws -> [Settled]? {
        prepared
    }

    func inSettleTransaction<T>(_ body: (SQLiteSession) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            try db.beginTransaction(.immediate)
            do {
                let result = try body(SQLiteSession(db: db))
                try db.commit()
                return result
            } catch {
                if db.isInsideTransaction { try? db.rollback() }
                throw error
            }
        }
    }

    var settleGroupDuration: Duration { .seconds(2) }

    /// One process writes: nothing else holds rows in the way.
    func isTransientConflict(_ error: any Error) -> Bool { false }
}

struct PendingKey: Sendable {
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
