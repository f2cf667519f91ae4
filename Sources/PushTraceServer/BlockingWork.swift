import NIOPosix

/// Work that may block on the database (every store call may), run on NIO's pool of threads for blocking work.
/// The cooperative threads that run every request handler are as many as the cores: one of them waiting on a disk
/// or a database server would hold up every request queued behind it.
enum BlockingWork {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
