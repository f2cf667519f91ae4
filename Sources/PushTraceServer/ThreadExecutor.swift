import NIOPosix

/// A serial executor that runs its jobs on a thread of its own. An actor on it may call the store, whose calls can
/// hold the thread while they wait on the disk or the database, without holding up the few threads that run every
/// request. Not an event loop's thread: the PostgreSQL engine still waits for its answers, which NIO forbids there.
final class ThreadExecutor: SerialExecutor {
    private let pool = NIOThreadPool(numberOfThreads: 1)

    init() {
        pool.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // Run even while the pool stops: a job dropped would leave its task suspended for ever.
        pool.submit { _ in job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    /// Ends the thread once its jobs are done.
    func shutdown() async throws {
        try await pool.shutdownGracefully()
    }
}
