import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PushTraceStore

/// The shared tasks this process leads, each held as a session-level advisory lock on a connection of its own: the
/// lock lasts while the connection does, so when the leading process dies PostgreSQL releases it and the next
/// process to ask takes the task over.
final class PostgresLeadership: @unchecked Sendable {
    private let location: PostgresLocation
    private let logger: Logger
    private let lock = NSLock()
    private var held: [SharedTask: PostgresConnection] = [:]
    private var closed = false

    init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// The advisory lock key of a task.
    static func key(_ task: SharedTask) -> Int64 {
        switch task {
        case .alertMonitor: return 0x7075_7368_7472_0003
        }
    }

    func leads(_ task: SharedTask) throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw PostgresStoreError.closed(location.description) }
        if let connection = held[task] {
            // Still ours while the connection answers; a broken one lost the lock with it.
            if !connection.isClosed, (try? connection.query("SELECT 1", logger: logger).wait()) != nil { return true }
            held[task] = nil
            try? connection.close().wait()
        }
        let connection = try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                        configuration: try location.configuration(), id: 0,
                                                        logger: logger).wait()
        let taken = try connection.query("SELECT pg_try_advisory_lock(\(Self.key(task)))", logger: logger).wait()
            .first(where: { _ in true })?.decode(Bool.self) ?? false
        if taken {
            held[task] = connection
        } else {
            try? connection.close().wait()
        }
        return taken
    }

    func close() {
        lock.lock()
        closed = true
        let connections = Array(held.values)
        held.removeAll()
        lock.unlock()
        for connection in connections { try? connection.close().wait() }
    }
}
