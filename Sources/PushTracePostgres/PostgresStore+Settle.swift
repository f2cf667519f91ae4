import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceStore

extension PostgresStore {
    /// Settles the causes of notifications whose summaries changed since they were last settled, a batch per
    /// transaction. Any number of servers may settle at once: a batch is claimed with `FOR UPDATE SKIP LOCKED`, so no
    /// notification is settled by two at once, and a server that dies mid-batch leaves its batch unsettled (its
    /// transaction undone, its locks released) for the next.
    ///
    /// The batch's rows stay locked until it commits: a bundle mentioning one of them waits for that commit, and its
    /// facts then mark it to settle again.
    @discardableResult
    public func settleCauses(limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?) throws -> Int {
        let waiting = try withSession { session in
            try session.query("SELECT count(*) FROM notification WHERE cause IS NULL").first(where: { _ in true })!.decode(Int64.self)
        }
        let total = min(Int(waiting), limit ?? .max)
        guard total > 0 else { return 0 }
        progress?(0, total)
        let diagnoser = Diagnoser(settings: settings)
        var done = 0
        while done < total {
            let size = min(max(1, batchSize), total - done)
            var attempt = 1
            let settled: Int
            while true {
                do {
                    settled = try writing { session in try settleBatch(size: size, diagnoser: diagnoser, session) }
                    break
                } catch  where attempt < 4 && PostgresFailure.isTransientConflict(error) {
                    // Another server's transaction held rollup rows in the way: the batch was undone; claim again.
                    attempt += 1
                    Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.1))
                }
            }
            guard settled > 0 else { break }
            done += settled
            progress?(done, total)
        }
        return done
    }

    /// Claims up to `size` unsettled notifications (in device order: the order causes are written in, which decides
    /// each rollup row's example), diagnoses them and writes their causes and rollup counts. A cause is decided from
    /// the summary where it can be; the records of the rest are read with one statement.
    private func settleBatch(size: Int, diagnoser: Diagnoser, _ session: PostgresSession) throws -> Int {
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
        guard !claimed.isEmpty else { return 0 }
        let settled = try Settling.decide(claimed, diagnoser: diagnoser, source: PostgresDiagnosisReader(session, store: self))
        let rollups = RollupDeltas()
        _ = try session.writeCauses(settled, rollups: rollups)
        try rollups.write(to: session)
        return claimed.count
    }
}
