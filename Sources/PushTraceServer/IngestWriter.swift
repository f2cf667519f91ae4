import Foundation
import Logging
import PushTraceCore
import PushTraceStore
import ServiceLifecycle

/// The server's writer: decoded bundles wait in a bounded queue and are stored by one writer on a thread of its own
/// (more where the store's transactions run side by side, ``TraceWriter/concurrentWriters``, each in a session of its
/// own), many to a commit, each acknowledged only once its commit has succeeded.
///
/// A full queue refuses at once (429); a commit that fails (a lock held elsewhere beyond the busy timeout, a full
/// disk, a read-only file) fails every bundle it held (503) and leaves nothing behind. The notification summaries
/// of committed bundles are written together a little later (deferred by the store's ``IngestSession``): when uploads pause, at least
/// every ``ServerSettings/summaryDelay``, and before a read that needs them. Idle time settles the causes of
/// notifications that received records. As a `Service`, it drains what was accepted before a graceful shutdown
/// completes, writes the summaries, then closes the database.
///
/// Its parts: the queue and the readers waiting for summaries (``IngestQueue``), the writers and their group commits
/// (``WriterLane``, through the store's ``IngestSession``, which keeps the deferred summaries), settling (``CauseSettler``); its timing is
/// ``IngestTiming``. It knows the store's interface only, whichever engine is behind it.
public final class IngestWriter: Service, Sendable {
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

    let store: any TraceStore
    private let settings: ServerSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    private let queue: IngestQueue

    init(store: any TraceStore, settings: ServerSettings, metrics: ServerMetrics, logger: Logger) {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        queue = IngestQueue(settings: settings)
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
        let executors = (0..<max(1, store.concurrentWriters)).map { _ in ThreadExecutor() }
        let lanes = executors.enumerated().map { number, executor in
            WriterLane(
                number: number, executor: executor, store: store, queue: queue, settings: settings, metrics: metrics,
                logger: logger)
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withDiscardingTaskGroup { group in
                    for lane in lanes { group.addTask { await lane.run() } }
                }
            } onGracefulShutdown: {
                self.queue.stopAccepting()
            }
        } onCancel: {
            self.queue.stopAccepting()
        }
        for executor in executors { try await executor.shutdown() }
        try store.close()
        logger.info("store closed", metadata: ["db": "\(store.location)"])
    }
}
