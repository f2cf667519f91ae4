import NIOPosix
import PushTraceStore
import ServiceLifecycle

/// Store calls that block a thread while they wait on the database (those of the interface's roles that are not
/// awaited yet), run on threads of the server's own.
///
/// The cooperative threads that run every request handler are as many as the cores: one of them waiting on a disk
/// or a database server would hold up every request queued behind it. NIO's shared pool of blocking threads is as
/// small, and shared with everything else in the process: a few reads waiting out a lock held elsewhere would hold
/// up token look-ups, and so every upload. The server's pool is sized for the calls it lets wait at once.
struct BlockingWork: Sendable {
    private let pool: NIOThreadPool

    /// A started pool of `threads` threads; ``service`` stops them when the server stops.
    init(threads: Int) {
        pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
    }

    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await pool.runIfActive(work)
    }

    /// A read of `store`, run as above and answered as ``APIError/reading(_:_:)`` answers.
    func read<Value: Sendable>(
        _ store: any StoreAccess,
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await APIError.reading(store) { try await run(work) }
    }

    /// Stops the threads at the server's graceful shutdown, after the work already queued. Listed first among the
    /// application's services, it is the last one stopped.
    var service: some Service { Shutdown(pool: pool) }

    private struct Shutdown: Service {
        let pool: NIOThreadPool

        func run() async throws {
            try? await gracefulShutdown()
            try await pool.shutdownGracefully()
        }
    }
}
