import Foundation
import Logging
import PushTraceCore
import PushTraceStore

/// One of the server's writers (``IngestWriter``): an actor whose jobs run on a thread of its own (``ThreadExecutor``),
/// so that the store's calls, which wait on the disk or the database, run on a thread named for it (`pt-writer`, then
/// `pt-writer-1`…, for top -H and perf) and not on one of the few threads that run every request. Waiting for work,
/// it is suspended and holds no thread.
///
/// The first writer, the main one, keeps the deferred summaries, lets their readers go and settles causes when
/// idle; a further one (a store whose transactions run side by side) only commits groups, each with its summaries.
actor WriterLane {
    private typealias Submission = IngestQueue.Submission

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let number: Int
    private let executor: ThreadExecutor
    private let store: any TraceStore
    private let queue: IngestQueue
    private let settings: ServerSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    /// Nil until the store could be opened for writing (retried at each commit).
    private var session: (any IngestSession)?
    /// The main writer's.
    private let settler: CauseSettler?

    init(
        number: Int, executor: ThreadExecutor, store: any TraceStore, queue: IngestQueue, settings: ServerSettings,
        metrics: ServerMetrics, logger: Logger
    ) {
        (self.number, self.executor, self.store, self.queue) = (number, executor, store, queue)
        (self.settings, self.metrics, self.logger) = (settings, metrics, logger)
        settler = number == 0 ? CauseSettler(store: store, settings: settings, metrics: metrics, logger: logger) : nil
    }

    /// Writes until the queue is stopped and empty.
    func run() async {
        Self.nameThread(number == 0 ? "pt-writer" : "pt-writer-\(number)")
        if let settler { await writeLoop(settler) } else { await helperLoop() }
    }

    /// Names the thread it runs on, from the thread itself: Foundation on Linux names only the current thread (15
    /// bytes at most).
    private nonisolated static func nameThread(_ name: String) {
        Thread.current.name = name
    }

    private func writeLoop(_ settler: CauseSettler) async {
        do {
            session = try store.makeIngestSession(deferringSummaries: true)
            if session?.defersSummaries == false {
                logger.warning("another process keeps a summary backlog for this database; writing summaries with each commit")
            }
        } catch {
            logger.warning(
                "could not write the summaries a stopped server left; writing summaries with each commit",
                metadata: ["error": "\(error)"])
        }
        while true {
            let pending = session?.hasPendingSummaries == true
            // Summaries waiting are written once uploads pause; otherwise a second with nothing to store settles.
            let next = await queue.next(
                pause: pending ? IngestTiming.summaryPause : IngestTiming.idlePause, main: true)
            if next.finished {
                writeSummaries()
                return
            }
            var batch = next.submissions
            metrics.queueDepth(next.depth)
            if !batch.isEmpty { commit(&batch) }
            if let session, session.hasPendingSummaries,
                next.readersWaiting || batch.isEmpty
                    || session.summariesDue(after: settings.summaryDelay, notifications: IngestTiming.backlogLimit)
            {
                writeSummaries()
            } else if next.readersWaiting {
                writeSummaries()  // nothing to write: let the readers go
            } else if batch.isEmpty || settler.isDue {
                writeSummaries()
                await settler.step()
            }
        }
    }

    /// A further writer's loop: it only commits groups, each with its summaries (its session defers none).
    private func helperLoop() async {
        while true {
            let next = await queue.next(pause: IngestTiming.idlePause, main: false)
            if next.finished { return }
            var batch = next.submissions
            guard !batch.isEmpty else { continue }
            commit(&batch)
        }
    }

    /// Writes the deferred summaries (kept for the next attempt if that fails) and lets waiting readers go.
    private func writeSummaries() {
        if let session, session.hasPendingSummaries {
            do {
                try session.writeSummaries()
            } catch {
                logger.warning("writing notification summaries failed; will retry", metadata: ["error": "\(error)"])
            }
        }
        queue.summariesWritten(stillPending: session?.hasPendingSummaries == true)
    }

    /// The writer's session, opened now if it could not be before (summaries then written with each commit).
    private func openSession() throws -> any IngestSession {
        if let session { return session }
        let opened = try store.makeIngestSession(deferringSummaries: false)
        session = opened
        return opened
    }

    /// Stores `batch` in one transaction. When the storage cannot commit (locked, full, read-only), every bundle
    /// of it gets 503 at once; when the group failed for another reason, each bundle is stored on its own so that
    /// one bundle the store refuses does not fail the others.
    private func commit(_ batch: inout [Submission]) {
        do {
            commit(&batch, in: try openSession())
        } catch {
            fail(batch, error)
        }
    }

    /// Every bundle of `batch` answered with the store's failure.
    private func fail(_ batch: [Submission], _ error: any Error) {
        let unavailable = APIError.storeUnavailable(
            error, of: store, "nothing was committed", retryAfter: settings.retryAfterUnavailable)
        let explained = store.explaining(error)
        for submission in batch {
            submission.logger.error("commit failed", metadata: ["error": "\(explained)"])
            submission.continuation.resume(
                throwing: unavailable
                    ?? APIError.unavailable(
                        "the store cannot answer (nothing was committed): the database failed; the server's log has more under this request_id",
                        retryAfter: settings.retryAfterUnavailable))
        }
    }

    private func commit(_ batch: inout [Submission], in session: any IngestSession) {
        let start = ContinuousClock.now
        do {
            // A bundle the decoder would refuse fails alone; any other error (SQLite's) aborts the whole group.
            let results = try session.inGroupCommit { group in
                try batch.map { submission -> Result<IngestResult, BundleError> in
                    do { return .success(try Self.ingest(submission.bundle, into: group)) } catch let error as BundleError {
                        return .failure(error)
                    }
                }
            }
            metrics.commit(bundles: batch.count, duration: ContinuousClock.now - start, failed: false)
            if session.hasPendingSummaries {
                // Before the acknowledgements: a reader told to wait for summaries waits for these too.
                queue.summariesWaiting()
            }
            // Each request still holds its bundle's records: let go of them here, so that the request, not this
            // writer (the one every bundle waits on), frees them.
            for index in batch.indices { batch[index].bundle.items = [] }
            for (submission, result) in zip(batch, results) { acknowledge(submission, result) }
        } catch {
            metrics.commit(bundles: batch.count, duration: ContinuousClock.now - start, failed: true)
            let unavailable = APIError.storeUnavailable(
                error, of: store, "nothing was committed", retryAfter: settings.retryAfterUnavailable)
            guard batch.count > 1, unavailable == nil else { return fail(batch, error) }
            logger.warning(
                "group commit failed; storing its bundles one by one",
                metadata: [
                    "bundles": "\(batch.count)", "error": "\(error)",
                ])
            for submission in batch {
                var one = [submission]
                commit(&one, in: session)
            }
        }
    }

    private static func ingest(_ bundle: IngestWriter.Bundle, into group: any IngestGroup) throws -> IngestResult {
        try group.ingest(source: bundle.source, receivedAt: bundle.receivedAt) { sink in
            for item in bundle.items { try sink(item) }
            for _ in 0..<bundle.rejectedUnkept { try sink(.rejected(.counted)) }
        }
    }

    private func acknowledge(_ submission: Submission, _ result: Result<IngestResult, BundleError>) {
        switch result {
        case .success(let stored):
            if stored.duplicate {
                metrics.bundle("duplicate")
            } else {
                metrics.bundle("accepted")
                metrics.records(accepted: stored.accepted, rejected: stored.rejected)
            }
            submission.logger.debug(
                "bundle committed",
                metadata: [
                    "app": "\(stored.appID)", "bundle": "\(stored.bundleID)", "accepted": "\(stored.accepted)",
                    "rejected": "\(stored.rejected)", "duplicate": "\(stored.duplicate)",
                ])
            submission.continuation.resume(returning: stored)
        case .failure(let error):
            metrics.bundle("rejected")
            submission.continuation.resume(throwing: APIError(bundleError: error))
        }
    }
}
