import Foundation
import PushTraceCore

/// An engine's part in the one settle loop (``SettleLoop``): how the waiting notifications are found and claimed,
/// where their causes are decided, and the transaction the causes are written in. Deciding (``Settling/decide``) and
/// writing (``SQLSession/writeCauses(_:rollups:)``) are the loop's, the same for every engine.
package protocol SettleEngine: Sendable {
    /// The session causes are written through.
    associatedtype Session: SQLSession
    /// One batch as listed before settling begins.
    associatedtype Batch: Sendable
    /// One batch as prepared ahead of the writer.
    associatedtype Prepared: Sendable

    /// The notifications waiting to be settled, at most `limit`, in batches of up to `batchSize`, and how many
    /// there are.
    func waiting(limit: Int?, batchSize: Int) throws -> (batches: [Batch], total: Int)
    /// The work on a batch that can be done outside the write transaction, on the loop's own thread while the batch
    /// before is written. SQLite decides the causes here, on its WAL readers; PostgreSQL claims inside the write.
    func prepare(_ batch: Batch, diagnoser: Diagnoser) throws -> Prepared
    /// The causes of a prepared batch to write, inside the write transaction (where PostgreSQL claims the batch
    /// with row locks and decides it); nil when nothing was left to claim, because another process settled the rest.
    func claim(_ prepared: Prepared, diagnoser: Diagnoser, in session: Session) throws -> [Settled]?
    /// Runs `body` in one write transaction, committed when it returns and undone when it throws.
    func inSettleTransaction<T>(_ body: (Session) throws -> T) throws -> T
    /// How long one transaction may gather batches before it commits. Each commit rewrites the summary pages its
    /// batches touched, so one writer (SQLite) gathers; where claimed rows stay locked until the commit
    /// (PostgreSQL), every batch commits alone.
    var settleGroupDuration: Duration { get }
    /// Whether `error` undid the transaction because another process held rows in the way, so that claiming again
    /// can succeed.
    func isTransientConflict(_ error: any Error) -> Bool
}

/// Settling every engine runs: the waiting notifications in batches, each prepared ahead of the writer by a thread
/// of its own, then claimed, decided and written with the rollup counts the causes add.
package enum SettleLoop {
    /// Settles the waiting notifications of `engine`, at most `limit`; `progress` is told (settled, total) once they
    /// are counted and after each batch. Returns how many were settled.
    package static func run<Engine: SettleEngine>(
        _ engine: Engine, settings: DiagnosisSettings, limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?
    ) throws -> Int {
        let (batches, total) = try engine.waiting(limit: limit, batchSize: max(1, batchSize))
        guard total > 0, !batches.isEmpty else { return 0 }
        // The first call says that settling has begun and how much there is: on a store larger than the page cache a
        // batch can take minutes of disk reads.
        progress?(0, total)
        let diagnoser = Diagnoser(settings: settings)
        let prepared = BoundedQueue<Result<Engine.Prepared, any Error>>(capacity: 2)
        let preparing = prepared.startProducer(named: "pt-settle", stackSize: 1 << 20) {
            for batch in batches where !prepared.isClosed {
                prepared.push(Result { try engine.prepare(batch, diagnoser: diagnoser) })
            }
        }
        // Settling returns only once the preparing thread is done with the engine, so that closing the store right
        // after finds every connection free.
        defer { preparing.stop() }
        var done = 0
        var taken = 0
        var exhausted = false
        while taken < batches.count && !exhausted {
            // The batches of this transaction, kept so that a transaction undone by a conflict claims them again.
            var group: [Engine.Prepared] = []
            var attempt = 1
            while true {
                do {
                    let written = try engine.inSettleTransaction { session in
                        let rollups = RollupDeltas()
                        let started = ContinuousClock.now
                        var written = 0
                        var index = 0
                        repeat {
                            if index == group.count { group.append(try prepared.pop().get()) }
                            guard let settled = try engine.claim(group[index], diagnoser: diagnoser, in: session) else {
                                exhausted = true
                                break
                            }
                            written += try session.writeCauses(settled, rollups: rollups)
                            index += 1
                            progress?(done + written, total)
                        } while taken + index < batches.count && started.duration(to: .now) < engine.settleGroupDuration
                        try rollups.write(to: session)
                        return written
                    }
                    done += written
                    taken += group.count
                    break
                } catch  where attempt < 4 && engine.isTransientConflict(error) {
                    // The transaction was undone; its batches are claimed again after a short random wait.
                    attempt += 1
                    exhausted = false
                    Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.1))
                }
            }
        }
        return done
    }
}
