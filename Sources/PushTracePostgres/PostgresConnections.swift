import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PushTraceStore

/// The store's connections to its database, lent to one caller at a time.
///
/// The store's interface is synchronous (the server calls it from its writer thread and NIO's blocking pool; a CLI
/// command or a test may call it from Swift's shared pool), so a query is sent on an event loop and its answer
/// waited for, blocking the caller's thread. A
/// connection that broke (the server restarted, the network went away) is dropped when it comes back; the next
/// lease opens a new one, so the store reconnects by itself once the database is reachable again.
final class PostgresConnections: @unchecked Sendable {
    private let location: PostgresLocation
    private let logger: Logger
    /// Guards every var below.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    private var nextID = 0
    /// The most connections open at once.
    let limit: Int

    init(location: PostgresLocation, limit: Int, logger: Logger) {
        self.location = location
        // A retention pass renews its lease on one connection between batches it writes on another.
        self.limit = max(2, limit)
        self.logger = logger
    }

    /// Runs `body` with a connection of its own. With `reusable` false the connection is closed afterwards (a
    /// statement of the operator's may have changed its settings).
    func withSession<T>(reusable: Bool = true, _ body: (PostgresSession) throws -> T) throws -> T {
        let connection = try lease()
        var healthy = false
        defer { giveBack(connection, healthy: healthy) }
        let session = PostgresSession(
            connection: connection, logger: logger, preparesStatements: location.poolMode != .transaction)
        let result = try body(session)
        // A statement sent outside a transaction and never waited for is waited for here, its failure thrown.
        try session.settle()
        healthy = reusable
        return result
    }

    /// Closes every connection; leases fail from then on.
    func close() {
        condition.lock()
        closed = true
        let connections = idle
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
        for connection in connections { try? connection.close().wait() }
    }

    private func lease() throws -> PostgresConnection {
        condition.lock()
        while !closed && idle.isEmpty && open >= limit { condition.wait() }
        if closed {
            condition.unlock()
            throw StoreError.closed(location.description)
        }
        if let connection = idle.popLast() {
            condition.unlock()
            if !connection.isClosed { return connection }
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            return try lease()
        }
        open += 1
        nextID += 1
        let id = nextID
        condition.unlock()
        do {
            return try Self.connect(location, id: id, logger: logger)
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    /// A new connection, waited for no longer than its connect timeout and a little more: the timeout covers only the
    /// TCP connect, not TLS and the start-up exchange. One that comes too late is closed.
    static func connect(_ location: PostgresLocation, id: Int, logger: Logger) throws -> PostgresConnection {
        let future = PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: try location.configuration(), id: id, logger: logger)
        let deadline = TimeAmount.seconds(location.connectTimeoutSeconds + 10)
        let promise = future.eventLoop.makePromise(of: PostgresConnection.self)
        let timer = future.eventLoop.scheduleTask(in: deadline) {
            promise.fail(StoreError.noAnswer(seconds: deadline.nanoseconds / 1_000_000_000))
        }
        future.whenComplete { result in
            timer.cancel()
            // Given to the promise, unless it failed already (then nobody will use the connection: close it).
            promise.futureResult.whenFailure { _ in if case .success(let late) = result { late.close().whenComplete { _ in _ = late } } }
            promise.completeWith(result)
        }
        return try promise.futureResult.wait()
    }

    /// A connection whose work failed may be in any state (a transaction left open, a half-read answer): it is
    /// closed rather than lent again.
    private func giveBack(_ connection: PostgresConnection, healthy: Bool) {
        condition.lock()
        if healthy && !closed && !connection.isClosed {
            idle.append(connection)
            condition.signal()
            condition.unlock()
            return
        }
        open -= 1
        condition.signal()
        condition.unlock()
        try? connection.close().wait()
    }
}

/// A task executor that runs its jobs on one event loop.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class EventLoopExecutor: TaskExecutor {
    private let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A task executor that runs its jobs on a pool of threads (``PostgresStore/readerThreads``).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ThreadPoolExecutor: TaskExecutor {
    private let pool: NIOThreadPool

    init(_ pool: NIOThreadPool) {
        self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // Run even while the pool stops: a job dropped would leave its task suspended for ever.
        pool.submit { _ in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// One connection's queries, their answers waited for (a thread of the caller's held) or awaited (none held).
package struct PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// Whether a statement run often is prepared once and kept: not through a pooler in transaction mode, where
    /// the next statement may reach another server connection, one that never saw it prepared.
    var preparesStatements = true
    /// How long one statement's answer is waited for before the connection is given up (closed, and the
    /// statement failed); nil: as long as it takes. Longer than every timeout the statements set themselves
    /// (`lock_timeout`, `pushtrace sql`'s `statement_timeout`).
    var deadline: TimeAmount? = .seconds(75)
    /// Whether the awaited calls wait as the others do, never suspending: a synchronous caller runs the store's
    /// async SQL inline (``InlineExecutor``). Only a session lent to an awaited call (``PostgresStore/awaiting(_:_:)``)
    /// suspends while PostgreSQL answers.
    var answersAtOnce = true
    /// Statements sent without waiting for their answers (``send(_:)``).
    let sent = SentStatements()

    /// Every row of the answer.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try answer(issue(query))
    }

    /// The statement sent on the connection. postgres-nio never answers a statement written to a connection whose
    /// channel has been torn down (the write fails, the statement's own promise is left pending), so one that is
    /// closed fails the statement at once. Checked on the connection's event loop: there, an open channel still
    /// has its handlers, and the write reaches them before anything can close it.
    private func issue(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
        let (connection, logger) = (connection, logger)
        return connection.eventLoop.flatSubmit {
            connection.isClosed
                ? connection.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
                : connection.query(query, logger: logger)
        }
    }

    /// Sends a statement without waiting for its answer. postgres-nio runs a connection's statements in the order
    /// they were sent, each as soon as the one before it is answered, so the caller goes on making the next one
    /// meanwhile. A failure is thrown by the next call that waits (a transaction's end waits).
    func send(_ query: PostgresQuery) {
        sent.append(issue(query))
    }

    /// ``send(_:)``, answering the statement's future as well, for a caller that reads its answer later.
    func sendWatched(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
        let future = issue(query)
        sent.append(future)
        return future
    }

    /// The answer of `future`, a statement sent after every one in ``sent``. When one of those failed, its error
    /// is thrown rather than this statement's: PostgreSQL refuses what follows a failure in a transaction, so that
    /// one's error is the one that says what went wrong.
    private func answer<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        let result = Result { try Self.wait(future, connection: connection, deadline: deadline) }
        try settle()
        return try result.get()
    }

    /// Waits for the answers of the statements sent without waiting; throws the first one's failure. The last is
    /// waited for with the deadline. When it was answered, so was every one before it (the connection answers in
    /// order). When it failed, the connection may have closed under statements postgres-nio never wrote and never
    /// answers: those are given a moment, and one still unanswered then counts as failed with the last.
    func settle() throws {
        let futures = sent.taken()
        guard let last = futures.last else { return }
        var lastFailure: (any Error)?
        do {
            _ = try Self.wait(last, connection: connection, deadline: deadline)
        } catch {
            lastFailure = error
        }
        for future in futures.dropLast() {
            do {
                _ = try Self.wait(future, connection: connection, deadline: lastFailure == nil ? nil : .seconds(1))
            } catch  where (error as? StoreError)?.code == .noAnswer {
                break
            } catch {
                throw error
            }
        }
        if let lastFailure { throw lastFailure }
    }

    /// A statement's answer, waited for no longer than `deadline` (``deadlined(_:connection:deadline:)``).
    static func wait<T: Sendable>(_ future: EventLoopFuture<T>, connection: PostgresConnection, deadline: TimeAmount?) throws -> T {
        try deadlined(future, connection: connection, deadline: deadline).wait()
    }

    /// `future`, failed when it is not answered within `deadline` (its connection then closed). Once, after PostgreSQL
    /// was restarted mid-upload, a statement's answer never came on a connection that was gone: without a deadline
    /// the server's writer waited for it for ever.
    static func deadlined<T: Sendable>(
        _ future: EventLoopFuture<T>, connection: PostgresConnection, deadline: TimeAmount?
    ) -> EventLoopFuture<T> {
        guard let deadline else { return future }
        let promise = future.eventLoop.makePromise(of: T.self)
        future.cascade(to: promise)
        let timer = future.eventLoop.scheduleTask(in: deadline) {
            // Closed first: the waiting thread, woken, must find the connection closed, not send on it again.
            connection.close().whenComplete { _ in _ = connection }
            promise.fail(StoreError.noAnswer(seconds: deadline.nanoseconds / 1_000_000_000))
        }
        future.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    /// The answer of `future`, awaited within the deadline: no thread waits for it.
    private func answered<T: Sendable>(_ future: EventLoopFuture<T>) async throws -> T {
        try await Self.deadlined(future, connection: connection, deadline: deadline).get()
    }

    /// ``query(_:)-(PostgresQuery)``, awaited.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> PostgresQueryResult {
        if answersAtOnce { return try answer(issue(query)) }
        return try await answered(issue(query))
    }

    /// ``query(_:)-(Statement)``, awaited.
    func query<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [PostgresRow]
    where Statement.Row == PostgresRow {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), preparesStatements else {
            return Array(try await query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())))
        }
        if answersAtOnce { return try answer(prepared(statement)) }
        return try await answered(prepared(statement))
    }

    /// ``transaction(_:_:)``, awaited. A failure leaves the transaction open: the caller closes the connection.
    func transaction<T>(_ mode: String = "READ WRITE", _ body: () async throws -> T) async throws -> T {
        try await query(PostgresQuery(unsafeSQL: "BEGIN \(mode)"))
        let result = try await body()
        guard try await query("COMMIT").metadata.command == "COMMIT" else { throw Self.rolledBackAtCommit }
        return result
    }

    /// PostgreSQL answers COMMIT of a transaction a failed statement ended with ROLLBACK, not an error: a failure
    /// something swallowed must not pass for a commit.
    static let rolledBackAtCommit = StoreError.refused(
        "PostgreSQL", state: "25P02", message: "the transaction was rolled back at its end: a statement in it had failed",
        detail: nil)

    /// Every row of a prepared statement's answer. postgres-nio prepares it once per connection, by name, so a
    /// statement run often is parsed once and PostgreSQL may keep its plan rather than plan it on every run.
    ///
    /// postgres-nio prepares statements only in `async` code. That code runs on the connection's event loop
    /// (``EventLoopExecutor``), not on Swift's shared pool: a caller of the store waits by blocking its thread, and
    /// that thread may be one of the pool's (an async test, a CLI command), on a small machine all of them.
    ///
    /// A statement whose preparation failed stays failed on that connection (postgres-nio keeps the outcome): the
    /// connection must not be lent again, which holds because a session whose work threw is closed.
    func query<Statement: PostgresPreparedStatement>(_ statement: Statement) throws -> [PostgresRow]
    where Statement.Row == PostgresRow {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), preparesStatements else {
            return Array(try query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())))
        }
        return try answer(prepared(statement))
    }

    /// The rows of `statement`, prepared on the connection, as they will be answered.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private func prepared<Statement: PostgresPreparedStatement>(_ statement: Statement) -> EventLoopFuture<[PostgresRow]>
    where Statement.Row == PostgresRow {
        let (connection, logger) = (connection, logger)
        let promise = connection.eventLoop.makePromise(of: [PostgresRow].self)
        Task(executorPreference: EventLoopExecutor(connection.eventLoop)) {
            do {
                // On the connection's event loop, as in ``issue(_:)``.
                guard !connection.isClosed else { throw ChannelError.ioOnClosedChannel }
                var rows: [PostgresRow] = []
                for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                promise.succeed(rows)
            } catch {
                promise.fail(error)
            }
        }
        return promise.futureResult
    }

    /// The answer's column names, which PostgreSQL sends even when there is no row, and its rows. postgres-nio
    /// names the columns only in `async` code, run on the connection's event loop as ``query(_:)-(Statement)`` is.
    func namedRows(_ query: PostgresQuery) throws -> (columns: [String], rows: [PostgresRow]) {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            let rows = Array(try self.query(query))
            return (rows.first.map { $0.map(\.columnName) } ?? [], rows)
        }
        let (connection, logger) = (connection, logger)
        let promise = connection.eventLoop.makePromise(of: ([String], [PostgresRow]).self)
        Task(executorPreference: EventLoopExecutor(connection.eventLoop)) {
            do {
                // On the connection's event loop, as in ``issue(_:)``.
                guard !connection.isClosed else { throw ChannelError.ioOnClosedChannel }
                let sequence = try await connection.query(query, logger: logger)
                var rows: [PostgresRow] = []
                for try await row in sequence { rows.append(row) }
                promise.succeed((sequence.columns.map(\.name), rows))
            } catch {
                promise.fail(error)
            }
        }
        let (columns, rows) = try answer(promise.futureResult)
        return (columns, rows)
    }

    /// The rows changed (or returned) by the statement.
    func changes(_ query: PostgresQuery) throws -> Int {
        try self.query(query).metadata.rows ?? 0
    }

    /// Each row handed to `row` as it arrives, without keeping them all; `row` runs on the connection's event loop,
    /// so it must not block.
    func stream(_ query: PostgresQuery, _ row: @escaping @Sendable (PostgresRow) throws -> Void) throws {
        let (connection, logger) = (connection, logger)
        // On the connection's event loop, as in ``issue(_:)``.
        _ = try answer(
            connection.eventLoop.flatSubmit {
                connection.isClosed
                    ? connection.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
                    : connection.query(query, logger: logger, row)
            })
    }

    /// Runs `body` in a transaction, committed when it returns and rolled back when it throws.
    func transaction<T>(_ mode: String = "READ WRITE", _ body: () throws -> T) throws -> T {
        try query(PostgresQuery(unsafeSQL: "BEGIN \(mode)"))
        do {
            let result = try body()
            guard try query("COMMIT").metadata.command == "COMMIT" else { throw Self.rolledBackAtCommit }
            return result
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a savepoint of the transaction: what it did is undone when it throws, the transaction goes on.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        send(PostgresQuery(unsafeSQL: "SAVEPOINT bundle"))
        do {
            let result = try body()
            // Waited for: a failure of a statement the body sent is the body's.
            try settle()
            // Not waited for: it fails only where a statement before it did, and the next wait throws that.
            send(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT bundle"))
            return result
        } catch {
            // Released once undone, so that a later failure never rolls back to this one, undoing what came between.
            _ = try? query("ROLLBACK TO SAVEPOINT bundle")
            send(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT bundle"))
            throw error
        }
    }
}

/// The answers a session has not waited for yet, in the order their statements were sent.
final class SentStatements: @unchecked Sendable {
    private let lock = NSLock()
    private var futures: [EventLoopFuture<PostgresQueryResult>] = []

    func append(_ future: EventLoopFuture<PostgresQueryResult>) {
        lock.withLock { futures.append(future) }
    }

    /// Every future, in order, no longer kept.
    func taken() -> [EventLoopFuture<PostgresQueryResult>] {
        lock.withLock {
            defer { futures.removeAll() }
            return futures
        }
    }
}
