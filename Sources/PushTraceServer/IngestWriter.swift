import Foundation
import Logging
import PushTraceCore
import PushTraceStore
import ServiceLifecycle

/// The server's one writer: decoded bundles wait in a bounded queue and are stored on one thread, many to a
/// commit, each acknowledged only once its commit has succeeded.
///
/// A full queue refuses at once (429); a commit that fails (a lock held elsewhere beyond the busy timeout, a full
/// disk, a read-only file) fails every bundle it held (503) and leaves nothing behind. The notification summaries
/// of committed bundles are written together a little later (a ``SummaryBacklog``): when uploads pause, at least
/// every ``ServerSettings/summaryDelay``, and before a read that needs them. Idle time settles the causes of
/// notifications that received records. As a `Service`, it drains what was accepted before a graceful shutdown
/// completes, writes the summaries, then closes the database.
public final class IngestWriter: Service, @unchecked Sendable {
    /// A bundle decoded by a request, ready to store.
    struct Bundle: Sendable {
        var source: String
        var receivedAt: Int64
        var items: [BundleItem]
    }

    private struct Submission {
        var bundle: Bundle
        var continuation: CheckedContinuation<IngestResult, any Error>
        var logger: Logger
    }

    let store: Store
    private let settings: ServerSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    // Guards `waiting`, `accepting`, `summariesPending` and `summaryReaders`; signalled when a submission or a
    // reader arrives or the writer must stop.
    private let condition = NSCondition()
    private var waiting: [Submission] = []
    private var accepting = true
    private var summariesPending = false
    private var summaryReaders: [CheckedContinuation<Void, Never>] = []
    // Touched by the writer thread only.
    /// Nil while another process keeps a backlog for the same database: then each commit writes its summaries.
    private var backlog: SummaryBacklog?
    private var causeGaugeKeys = Set<CauseCount.Key>()
    private var causeGaugeRefreshed = Date.distantPast
    private var lastSettled = Date()

    init(store: Store, settings: ServerSettings, metrics: ServerMetrics, logger: Logger) {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Queues a bundle and returns its result once committed. Throws ``APIError`` 429 when the queue is full and
    /// 503 when the store cannot commit or the server is stopping.
    func submit(_ bundle: Bundle, logger: Logger) async throws -> IngestResult {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            defer { condition.unlock() }
            guard accepting else {
                continuation.resume(throwing: APIError.unavailable("the server is shutting down",
                                                                   retryAfter: settings.retryAfterUnavailable))
                return
            }
            guard waiting.count < settings.queueCapacity else {
                continuation.resume(throwing: APIError.overloaded(retryAfter: settings.retryAfterOverloaded))
                return
            }
            waiting.append(Submission(bundle: bundle, continuation: continuation, logger: logger))
            if waiting.count == 1 { condition.signal() }
        }
    }

    /// Returns once the summaries of every bundle acknowledged so far are written: search and the lookup of a
    /// notification's app read them, and an uploader expects to find what it was just told is stored.
    func summariesWritten() async {
        await withCheckedContinuation { continuation in
            condition.lock()
            defer { condition.unlock() }
            guard summariesPending else { return continuation.resume() }
            summaryReaders.append(continuation)
            condition.signal()
        }
    }

    public func run() async throws {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    Thread {
                        // Named for top -H and perf (set from the thread itself: Foundation on Linux names only the
                        // current thread; 15 bytes at most).
                        Thread.current.name = "pt-writer"
                        self.writeLoop()
                        done.resume()
                    }.start()
                }
            } onGracefulShutdown: {
                self.stopAccepting()
            }
        } onCancel: {
            self.stopAccepting()
        }
        try store.close()
        logger.info("store closed", metadata: ["db": "\(store.path)"])
    }

    private func stopAccepting() {
        condition.lock()
        accepting = false
        condition.broadcast()
        condition.unlock()
    }

    private func writeLoop() {
        do {
            backlog = try store.makeSummaryBacklog()
            if backlog == nil {
                logger.warning("another process keeps a summary backlog for this database; writing summaries with each commit")
            }
        } catch {
            logger.warning("could not write the summaries a stopped server left; writing summaries with each commit",
                           metadata: ["error": "\(error)"])
        }
        while true {
            condition.lock()
            if waiting.isEmpty, summaryReaders.isEmpty, accepting {
                // Summaries waiting are written once uploads pause; otherwise a second with nothing to store settles.
                let pause = backlog?.isEmpty == false ? 0.05 : 1
                _ = condition.wait(until: Date(timeIntervalSinceNow: pause))
            }
            if waiting.isEmpty, !accepting {
                condition.unlock()
                writeSummaries()
                return
            }
            var batch = Array(waiting.prefix(settings.maxBundlesPerCommit))
            waiting.removeFirst(batch.count)
            let depth = waiting.count
            let readersWaiting = !summaryReaders.isEmpty
            condition.unlock()
            metrics.queueDepth(depth)
            if !batch.isEmpty { commit(&batch) }
            if let backlog, !backlog.isEmpty,
               readersWaiting || batch.isEmpty || backlog.isDue(after: settings.summaryDelay, notifications: Self.backlogLimit) {
                writeSummaries()
            } else if readersWaiting {
                writeSummaries()  // nothing to write: let the readers go
            } else if batch.isEmpty || Date().timeIntervalSince(lastSettled) >= 10 {
                // Idle, or under steady load (the queue is never idle for long) every ten seconds all the same.
                writeSummaries()
                settleStep()
            }
        }
    }

    /// Facts of at most this many notifications wait in the backlog (a few megabytes).
    private static let backlogLimit = 20_000

    /// Writes the backlog's summaries (kept for the next attempt if that fails) and lets waiting readers go.
    private func writeSummaries() {
        if let backlog, !backlog.isEmpty {
            do {
                try store.writeSummaries(backlog)
            } catch {
                logger.warning("writing notification summaries failed; will retry", metadata: ["error": "\(error)"])
            }
        }
        condition.lock()
        summariesPending = backlog?.isEmpty == false
        let readers = summaryReaders
        summaryReaders = []
        condition.unlock()
        for reader in readers { reader.resume() }
    }

    /// Stores `batch` in one transaction. When the storage cannot commit (locked, full, read-only), every bundle
    /// of it gets 503 at once; when the group failed for another reason, each bundle is stored on its own so that
    /// one bundle the store refuses does not fail the others.
    private func commit(_ batch: inout [Submission]) {
        let start = ContinuousClock.now
        do {
            // A bundle the decoder would refuse fails alone; any other error (SQLite's) aborts the whole group.
            let results = try store.inGroupCommit(deferringSummariesTo: backlog) { group in
                try batch.map { submission -> Result<IngestResult, BundleError> in
                    do { return .success(try self.ingest(submission.bundle, into: group)) } catch let error as BundleError {
                        return .failure(error)
                    }
                }
            }
            metrics.commit(bundles: batch.count, duration: ContinuousClock.now - start, failed: false)
            if backlog?.isEmpty == false {
                // Before the acknowledgements: a reader told to wait for summaries waits for these too.
                condition.lock()
                summariesPending = true
                condition.unlock()
            }
            // Each request still holds its bundle's records: let go of them here, so that the request, not this
            // thread (the one every bundle waits on), frees them.
            for index in batch.indices { batch[index].bundle.items = [] }
            for (submission, result) in zip(batch, results) { acknowledge(submission, result) }
        } catch {
            metrics.commit(bundles: batch.count, duration: ContinuousClock.now - start, failed: true)
            guard batch.count > 1, !Store.isStorageUnavailable(error) else {
                let explained = StoreError.explaining(error, path: store.path)
                for submission in batch {
                    submission.logger.error("commit failed", metadata: ["error": "\(explained)"])
                    submission.continuation.resume(throwing: APIError.unavailable(
                        "the store could not commit: \(Store.unavailableReason(error))",
                        retryAfter: settings.retryAfterUnavailable))
                }
                return
            }
            logger.warning("group commit failed; storing its bundles one by one", metadata: [
                "bundles": "\(batch.count)", "error": "\(error)",
            ])
            for submission in batch {
                var one = [submission]
                commit(&one)
            }
        }
    }

    private func ingest(_ bundle: Bundle, into group: GroupCommit) throws -> IngestResult {
        try group.ingest(source: bundle.source, receivedAt: bundle.receivedAt) { sink in
            for item in bundle.items { try sink(item) }
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
            submission.logger.debug("bundle committed", metadata: [
                "app": "\(stored.appID)", "bundle": "\(stored.bundleID)", "accepted": "\(stored.accepted)",
                "rejected": "\(stored.rejected)", "duplicate": "\(stored.duplicate)",
            ])
            submission.continuation.resume(returning: stored)
        case .failure(let error):
            metrics.bundle("rejected")
            submission.continuation.resume(throwing: APIError(bundleError: error))
        }
    }

    /// Diagnoses up to `settleStep` notifications whose records changed. Settling is done when the writer is idle
    /// rather than after every commit: a notification's bundles arrive over minutes, and each is diagnosed once
    /// its records have settled, not once per bundle.
    private func settleStep() {
        lastSettled = Date()
        do {
            let settled = try store.settleCauses(limit: settings.settleStep)
            // The gauge reads the hourly rollup (a few thousand rows): refresh it soon after causes change.
            let sinceRefresh = Date().timeIntervalSince(causeGaugeRefreshed)
            if sinceRefresh >= 60 || (settled > 0 && sinceRefresh >= 2) {
                causeGaugeRefreshed = Date()
                let since = Int64(Date().timeIntervalSince1970 * 1000) - 23 * 3_600_000
                causeGaugeKeys = metrics.notificationsByCause(
                    try store.causeCounts(since: since).map {
                        CauseCount(appID: $0.appID, category: $0.category, cause: $0.cause, count: $0.count)
                    },
                    previous: causeGaugeKeys)
            }
        } catch {
            logger.warning("settling causes failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
