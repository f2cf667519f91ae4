import NIOPosix
import PushTraceStore
import ServiceLifecycle

/// Work that may block on the database (every store call may), run on threads of the server's own.
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

    /// A read of `store`, run as above. A store that cannot answer now (PostgreSQL unreachable, SQLite's lock held
    /// past its busy timeout) is answered 503 with `Retry-After`, which clients retry, rather than a final 500.
    func read<Value: Sendable>(
        _ store: any StoreAccess,
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        do {
            return try await run(work)
        } catch {
            throw APIError.storeUnavailable(error, of: store, "nothing was read", retryAfter: 5) ?? error
        }
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
