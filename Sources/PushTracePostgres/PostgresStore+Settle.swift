import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceStore

extension PostgresStore {
    /// Settles the causes of notifications whose summaries changed since they were last settled, a batch per
    /// transaction, by the store's ``SettleLoop``. Returns how many were settled.
    @discardableResult
    public func settleCauses(limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?) throws -> Int {
        try SettleLoop.run(
            PostgresSettling(store: self), settings: settings, limit: limit, batchSize: batchSize, progress: progress)
    }
}

/// PostgreSQL's part in settling. Any number of servers may settle at once: a batch is claimed inside its write
/// transaction with `FOR UPDATE SKIP LOCKED`, so no notification is settled by two at once, and a server that dies
/// mid-batch leaves its batch unsettled (its transaction undone, its locks released) for the next.
///
/// The batch's rows stay locked until it commits: a bundle mentioning one of them waits for that commit, and its
/// facts then mark it to settle again.
struct PostgresSettling: SettleEngine {
    let store: PostgresStore

    /// How many wait, counted once: batches are only sizes, each claimed when its transaction runs.
    func waiting(limit: Int?, batchSize: Int) throws -> (batches: [Int], total: Int) {
        let waiting = try store.withSession { session in
            try session.query("SELECT count(*) FROM notification WHERE cause IS NULL").first(where: { _ in true })!
                .decode(Int64.self)
        }
        let total = min(Int(waiting), limit ?? .max)
        return (stride(from: 0, to: total, by: batchSize).map { min(batchSize, total - $0) }, total)
    }

    func prepare(_ size: Int, diagnoser: Diagnoser) throws -> Int { size }

    /// Claims up to `size` unsettled notifications (in device order: the order causes are written in, which decides
    /// each rollup row's example) and diagnoses them. A cause is decided from the summary where it can be; the
    /// records of the rest are read with one statement.
    func claim(_ size: Int, diagnoser: Diagnoser, in session: PostgresSession) throws -> [Settled]? {
        var claimed: [Unsettled] = []
        for row in try session.sqlRows(
            """
            SELECT app_id, notification_id, \(unescaped: NotificationFacts.storedColumnList) FROM notification
            WHERE cause IS NULL ORDER BY app_id, device_id NULLS FIRST, notification_id LIMIT \(Int64(size))
            FOR UPDATE SKIP LOCKED
            """)
        {
            claimed.append(
                Unsettled(
                    key: NotificationRowKey(appID: try row.decode("app_id"), notificationID: try row.decode("notification_id")),
                    facts: try NotificationFacts(stored: row)))
        }
        guard !claimed.isEmpty else { return nil }
        return try Settling.decide(claimed, diagnoser: diagnoser, source: store.sql.blocks(session))
    }

    func inSettleTransaction<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try store.writing(body)
    }

    /// The claimed rows are locked until the commit, and bundles naming them wait for it.
    var settleGroupDuration: Duration { .zero }

    /// Another server's transaction held rollup rows in the way: the batch was undone, and is claimed again.
    func isTransientConflict(_ error: any Error) -> Bool {
        PostgresFailure.isTransientConflict(error)
    }
}
