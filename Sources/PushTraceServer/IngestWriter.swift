import Foundation
import Logging
import PushTraceCore
import PushTraceStore
import ServiceLifecycle

/// The server's writer: decoded bundles wait in a bounded queue and are stored on one thread (more where the store's
/// transactions run side by side, ``TraceWriter/concurrentWriters``, each in a session of its own), many to a
/// commit, each acknowledged only once its commit has succeeded.
///
/// A full queue refuses at once (429); a commit that fails (a lock held elsewhere beyond the busy timeout, a full
/// disk, a read-only file) fails every bundle it held (503) and leaves nothing behind. The notification summaries
/// of committed bundles are written together a little later (deferred by the store's ``IngestSession``): when uploads pause, at least
/// every ``ServerSettings/summaryDelay``, and before a read that needs them. Idle time settles the causes of
/// notifications that received records. As a `Service`, it drains what was accepted before a graceful shutdown
/// completes, writes the summaries, then closes the database.
///
/// Its parts: the queue and the readers waiting for summaries (``IngestQueue``), the group commit (here, through
/// the store's ``IngestSession``, which keeps the deferred summaries), settling (``CauseSettler``); its timing is
/// ``IngestTiming``. It knows the store's interface only, whichever engine is behind it.
public final class IngestWriter: Service, @unchecked Sendable {
    /// A bundle decoded by a request, ready to store.
    struct Bundle: Sendable {
        var source: String
        var receivedAt: Int64
        var items: [BundleItem]
        /// Rejected lines after the items that the request counted but did not keep (``RejectedLineBatch``).
        var rejectedUnkept = 0
        /// Whose upload it is, for the queue's turns (``FairQueue``): an ingest token's ID; nil for the operator's
        /// (an admin token, `--no-auth`, the backend's events under an admin token).
        var owner: String? = nil

        /// The lines it holds: what it costs the writer.
        var lines: Int { items.count + rejectedUnkept }
    }

    private typealias Submission = IngestQueue.Submission

    let store: any TraceStore
    private let settings: ServerSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    private let queue: IngestQueue
    // Touched by the writer thread only.
    /// Nil until the store could be opened for writing (retried at each commit).
    private var session: (any IngestSession)?
    private let settler: CauseSettler

    init(store: any TraceStore, settings: ServerSettings, metrics: ServerMetrics, logger: Logger) {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        queue = IngestQueue(settings: settings)
        settler = CauseSettler(store: store, settings: settings, metrics: metrics, logger: logger)
    }

    /// Queues a bundle and returns its result once committed. Throws ``APIError`` 429 when the queue is full and
    /// 503 when the store cannot commit or the server is stopping.
    func submit(_ bundle: Bundle, logger: Logger) async throws -> IngestResult {
        try await withCheckedThrowingContinuation { continuation in queue.submit(bundle, logger: logger, continuation) }
    }

    /// Returns once the summaries of every bundle acknowledged so far are written: search and the lookup of a
    /// notification's app read them, and an uploader expects to find what it was just told is stored.
    func summariesWritten() async {
        await withCheckedContinuation { continuation in queue.awaitSummaries(continuation) }
    }

    public func run() async throws {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    // Every writer thread's end, the last resuming `done`.
                    let writers = max(1, store.concurrentWriters)
                    let running = WriterCount(writers)
                    Thread {
                        // Named for top -H and perf (set from the thread itself: Foundation on Linux names only the
                        // current thread; 15 bytes at most).
                        Thread.current.name = "pt-writer"
                        self.writeLoop()
                        if running.ended() { done.resume() }
                    }.start()
                    for number in 1..<writers {
                        Thread {
                            Thread.current.name = "pt-writer-\(number)"
                            self.helperLoop()
                            if running.ended() { done.resume() }
                        }.start()
                    }
                }
            } onGracefulShutdown: {
                self.stopAccepting()
            }
        } onCancel: {
            self.stopAccepting()
        }
        try store.close()
        logger.info("store closed", metadata: ["db": "\(store.location)"])
    }

    private func stopAccepting() {
        queue.stopAccepting()
    }

    private func writeLoop() {
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
            let next = queue.next(pause: pending ? IngestTiming.summaryPause : IngestTiming.idlePause)
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
                settler.step()
            }
        }
    }

    /// A further writer of a store that takes several groups at once (``TraceWriter/concurrentWriters``): it only
    /// commits groups, each with its summaries (its session defers none); the first writer settles and lets readers
    /// go.
    private func helperLoop() {
        var own: (any IngestSession)?
        while true {
            let next = queue.next(pause: IngestTiming.idlePause)
            if next.finished { return }
            var batch = next.submissions
            guard !batch.isEmpty else { continue }
            do {
                let session = try own ?? store.makeIngestSession(deferringSummaries: false)
                own = session
                commit(&batch, in: session)
            } catch {
                fail(batch, error)
            }
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
                    do { return .success(try self.ingest(submission.bundle, into: group)) } catch let error as BundleError {
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
            // thread (the one every bundle waits on), frees them.
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

    private func ingest(_ bundle: Bundle, into group: any IngestGroup) throws -> IngestResult {
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

/// How many writer threads are still running: the last to end says so.
private final class WriterCount: @unchecked Sendable {
    private let lock = NSLock()
    private var running: Int

    init(_ count: Int) { running = max(1, count) }

    /// One writer ended; true for the last.
    func ended() -> Bool {
        lock.withLock {
            running -= 1
            return running == 0
        }
    }
}
