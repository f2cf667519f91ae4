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
        var claimed: [(appID: String, notificationID: String, facts: NotificationFacts)] = []
        for row in try session.sqlRows(
            """
            SELECT app_id, notification_id, \(unescaped: NotificationFacts.storedColumnList) FROM notification
            WHERE cause IS NULL ORDER BY app_id, device_id NULLS FIRST, notification_id LIMIT \(Int64(size))
            FOR UPDATE SKIP LOCKED
            """)
        {
            claimed.append((try row.decode("app_id"), try row.decode("notification_id"), try NotificationFacts(stored: row)))
        }
        guard !claimed.isEmpty else { return 0 }
        let reader = PostgresDiagnosisReader(session, store: self)
        var decided = try claimed.map { key in
            try diagnoser.cause(
                of: key.facts.folded,
                config: { try DiagnosisAssembly.configInForce(reader.configs(appID: key.appID, deviceID: $0, at: $1)) },
                lastSeen: { try reader.lastSeen(appID: key.appID, deviceID: $0) })
        }
        let undecided = decided.indices.filter { decided[$0] == nil }
        let lines = try reader.lines(of: undecided.map { (claimed[$0].appID, claimed[$0].notificationID) })
        for (index, at) in undecided.enumerated() {
            let key = claimed[at]
            decided[at] =
                diagnoser.diagnose(
                    try reader.input(appID: key.appID, notificationID: key.notificationID, lines: lines[index])
                ).cause
        }
        let rollups = RollupDeltas()
        var apps: [String] = [], ids: [String] = [], causes: [String] = []
        for (index, key) in claimed.enumerated() {
            let cause = decided[index]!.rawValue
            rollups.add(appID: key.appID, notificationID: key.notificationID, facts: key.facts, cause: cause, sign: 1)
            apps.append(key.appID)
            ids.append(key.notificationID)
            causes.append(cause)
        }
        try session.query(
            """
            UPDATE notification n SET cause = c.cause
            FROM unnest(\(apps)::text[], \(ids)::text[], \(causes)::text[]) AS c(app_id, notification_id, cause)
            WHERE n.app_id = c.app_id AND n.notification_id = c.notification_id
            """)
        try rollups.write(to: session)
        return claimed.count
    }
}
