import NIOPosix
import PushTraceStore

/// Work that may block on the database (every store call may), run on NIO's pool of threads for blocking work.
/// The cooperative threads that run every request handler are as many as the cores: one of them waiting on a disk
/// or a database server would hold up every request queued behind it.
enum BlockingWork {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await NIOThreadPool.singleton.runIfActive(work)
    }

    /// A read of `store`, run as above. A store that cannot answer now (PostgreSQL unreachable, SQLite's lock held
    /// past its busy timeout) is answered 503 with `Retry-After`, which clients retry, rather than a final 500.
    static func read<Value: Sendable>(
        _ store: any StoreAccess,
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        do {
            return try await run(work)
        } catch {
            throw APIError.storeUnavailable(error, of: store, "nothing was read", retryAfter: 5) ?? error
        }
    }
}
