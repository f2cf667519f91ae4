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

    /// Connections given up are closed without waiting, each kept by its close's callback until it is closed
    /// (postgres-nio asserts that a connection it frees was closed).
    func leads(_ task: SharedTask) throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw StoreError.closed(location.description) }
        if let connection = held[task] {
            // Still ours while the connection answers; a broken one lost the lock with it.
            if !connection.isClosed,
                (try? PostgresSession.wait(
                    connection.query("SELECT 1", logger: logger), connection: connection,
                    deadline: Self.deadline)) != nil
            {
                return true
            }
            held[task] = nil
            connection.close().whenComplete { _ in _ = connection }
        }
        let connection = try PostgresConnections.connect(location, id: 0, logger: logger)
        do {
            let taken =
                try PostgresSession.wait(
                    connection.query("SELECT pg_try_advisory_lock(\(Self.key(task)))", logger: logger),
                    connection: connection, deadline: Self.deadline
                )
                .first(where: { _ in true })?.decode(Bool.self) ?? false
            if taken {
                held[task] = connection
            } else {
                connection.close().whenComplete { _ in _ = connection }
            }
            return taken
        } catch {
            connection.close().whenComplete { _ in _ = connection }
            throw error
        }
    }

    /// How long an answer about the lock is waited for.
    private static let deadline: TimeAmount = .seconds(20)

    func close() {
        lock.lock()
        closed = true
        let connections = Array(held.values)
        held.removeAll()
        lock.unlock()
        for connection in connections { try? connection.close().wait() }
    }
}
