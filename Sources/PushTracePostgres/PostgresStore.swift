import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import PushTraceCore
import PushTraceStore

/// A pushtrace store in a PostgreSQL database (docs/spec.md §9): the data model of the SQLite engine, shared by any number
/// of `pushtrace serve` processes.
///
/// Every bundle is stored atomically (a savepoint in its group's transaction). What several servers could do to the
/// same rows at once is made safe by the database, not by a single writer: a bundle's `(app_id, bundle_id)` is
/// unique, so the same bundle sent to two servers is stored once; a summary is merged under its row lock; rollup
/// counts are added by upserts; settling claims its notifications with `FOR UPDATE SKIP LOCKED`. Rows are locked in
/// key order, so two servers' transactions wait for each other rather than deadlock.
public final class PostgresStore: Sendable {
    /// Where the database is (its URL without the password).
    public let location: String
    /// The thresholds causes are settled with.
    public let settings: DiagnosisSettings
    /// The connections of the calls that wait with their thread (writing, settling, upkeep, exports).
    let connections: PostgresConnections
    /// The connections of the awaited calls (the reads), whose statements hold no thread while PostgreSQL answers;
    /// it runs until ``close()``.
    let client: PostgresClient
    private let clientRun: Task<Void, Never>
    /// The threads an awaited call's body runs on (``ThreadPoolExecutor``), not Swift's shared pool: its CPU work,
    /// and a dictionary loaded with a statement that waits, would hold up the few threads every request needs.
    let readerThreads: NIOThreadPool
    /// How long an awaited call waits for a connection of the client's: postgres-nio waits for ever while the
    /// database cannot be reached.
    let leaseLimit: Duration
    let logger: Logger
    /// The record blocks' dictionaries; a bundle's first block is found by the blocks' index on their bundle.
    let dictionaries = BlockDictionaries(layout: .postgres)
    /// The shared tasks this process leads.
    let leadership: PostgresLeadership
    /// The pooler between this store and PostgreSQL, as the URL says (``PostgresLocation/poolMode``).
    let poolMode: PostgresLocation.PoolMode?

    /// Connects to the database `url` names (gaps filled from the `PG*` variables), and migrates it when needed.
    ///
    /// - Parameters:
    ///   - connections: the most connections the calls that wait with their thread open at once;
    ///   - readers: the most connections the awaited reads open at once. Each is a server process of PostgreSQL's:
    ///     `max_connections` bounds their sum over every pushtrace process.
    public init(
        url: String, settings: DiagnosisSettings = .default, connections: Int = 8, readers: Int = 4,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger = Logger(label: "pushtrace.postgres")
    ) throws {
        let place = try PostgresLocation(url: url, environment: environment)
        location = place.description
        poolMode = place.poolMode
        self.settings = settings
        self.logger = logger
        self.connections = PostgresConnections(location: place, limit: connections, logger: logger)
        leadership = PostgresLeadership()
        leaseLimit = .seconds(place.connectTimeoutSeconds + 10)
        client = PostgresClient(configuration: try place.clientConfiguration(connections: readers), backgroundLogger: logger)
        readerThreads = NIOThreadPool(numberOfThreads: max(1, readers))
        readerThreads.start()
        // On an event loop, not on Swift's shared pool, whose few threads a caller of the store may hold waiting.
        clientRun =
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                Task(executorPreference: EventLoopExecutor(MultiThreadedEventLoopGroup.singleton.next())) { [client] in
                    await client.run()
                }
            } else {
                Task { [client] in await client.run() }
            }
        do {
            try self.connections.withSession { try PostgresSchema.migrate($0, location: place.description) }
        } catch {
            self.connections.close()
            clientRun.cancel()
            try? readerThreads.syncShutdownGracefully()
            throw explaining(error)
        }
        // A store's errors carry PostgreSQL's words from here on (postgres-nio's own description hides them).
    }

    public func close() throws {
        // Another server may take over at once rather than when the leases expire.
        try? connections.withSession { try leadership.releaseAll($0) }
        connections.close()
        clientRun.cancel()
        try? readerThreads.syncShutdownGracefully()
    }

    /// Whether this process leads `task`: it holds the task's lease (``PostgresLeadership``), taken or renewed now.
    public func leads(_ task: SharedTask, for lease: Duration) throws -> Bool {
        let seconds = Double(lease.components.seconds) + Double(lease.components.attoseconds) / 1e18
        return try connections.withSession { try leadership.take(PostgresLeadership.name(task), forSeconds: max(1, seconds), $0) }
    }

    /// Runs `body` with a connection of the store's.
    func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try connections.withSession(body)
    }

    /// Runs `body` in a transaction on a connection of the store's.
    func inTransaction<T>(_ mode: String = "READ WRITE", _ body: (PostgresSession) throws -> T) throws -> T {
        try connections.withSession { session in try session.transaction(mode) { try body(session) } }
    }

    /// Runs `body` in a transaction that writes: one whose process disappears leaves PostgreSQL holding its row locks
    /// no longer than the idle timeout, and a lock another server holds is waited for no longer than the lock
    /// timeout (the transaction then fails; nothing of it is stored).
    func writing<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try inTransaction { session in
            try session.query(Self.writeTimeouts)
            return try body(session)
        }
    }

    /// Runs `body` in a read-only transaction that sees one moment of the database (repeatable read).
    func reading<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try inTransaction(Self.readMode, body)
    }

    static let readMode = "ISOLATION LEVEL REPEATABLE READ READ ONLY"
    /// What a transaction that writes sets first (``writing(_:)``).
    static let writeTimeouts: PostgresQuery = """
        SELECT set_config('idle_in_transaction_session_timeout', '60s', true), set_config('lock_timeout', '30s', true)
        """

    /// Runs `body` with a connection of the client's, awaited: as ``readOne``, ``reading(_:)`` or ``writing(_:)``
    /// for `transaction`. A connection whose work failed may be in any state (a transaction left open, a statement
    /// whose preparation failed): it is closed rather than lent again.
    func awaiting<T: Sendable>(
        _ transaction: StoreSQL<PostgresSession>.Transaction, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return try await leased(transaction, body) }
        return try await withTaskExecutorPreference(ThreadPoolExecutor(readerThreads)) { try await leased(transaction, body) }
    }

    private func leased<T: Sendable>(
        _ transaction: StoreSQL<PostgresSession>.Transaction, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        let preparesStatements = poolMode != .transaction
        return try await Self.withLease(client, limit: leaseLimit, location: location) { [logger] connection in
            let session = PostgresSession(
                connection: connection, logger: logger, preparesStatements: preparesStatements, answersAtOnce: false)
            do {
                switch transaction {
                case .readOne: return try await body(session)
                case .read: return try await session.transaction(Self.readMode) { try await body(session) }
                case .write:
                    return try await session.transaction {
                        try await session.query(Self.writeTimeouts)
                        return try await body(session)
                    }
                }
            } catch {
                // Closed before the lease is given back, so that the pool never lends it again.
                try? await connection.close()
                try? await connection.closeFuture.get()
                throw error
            }
        }
    }

    /// Whether a lease came before its limit: one of the two is decided, once.
    private enum LeaseRace { case pending, leased, timedOut }

    /// `body` with a connection of `client`'s, whose lease is waited for no longer than `limit`; `body` is bounded by
    /// its statements' own deadlines. A lease that comes after the limit runs no body, so that a call answered with
    /// the timeout has done nothing. A lease the pool refuses (it gave up connecting, or it was shut down) is
    /// ``StoreError/unavailable(_:reason:detail:)``; a caller cancelled while it waits gets its `CancellationError`.
    static func withLease<T: Sendable>(
        _ client: PostgresClient, limit: Duration, location: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let race = NIOLockedValueBox(LeaseRace.pending)
        let decide: @Sendable (LeaseRace) -> Bool = { outcome in
            race.withLockedValue { state in
                guard state == .pending else { return false }
                state = outcome
                return true
            }
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                do {
                    return try await client.withConnection { connection in
                        guard decide(.leased) else { throw CancellationError() }
                        return try await body(connection)
                    }
                } catch  where race.withLockedValue({ $0 == .pending }) {
                    // postgres-nio answers a lease request cancelled with an error of its own.
                    if Task.isCancelled { throw CancellationError() }
                    throw StoreError.unavailable(
                        location, reason: "the database cannot be reached now: try again shortly", detail: "\(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                // Cancelled, the caller gets the lease's own answer (a `CancellationError` while it waits).
                guard !Task.isCancelled, decide(.timedOut) else { return nil }
                throw StoreError.noAnswer(seconds: limit.components.seconds)
            }
            while let answer = try await group.next() {
                if let answer {
                    group.cancelAll()
                    return answer
                }
            }
            preconditionFailure("the leasing task ended without an answer")
        }
    }
}

extension PostgresStore {
    /// postgres-nio's errors (and the network's under it) as ``StoreError``: a database that cannot take work now is
    /// ``StoreError/unavailable(_:reason:detail:)``, a statement it refused ``StoreError/refused(_:state:message:detail:)``
    /// in its own words (postgres-nio's error hides them from its description).
    public func explaining(_ error: any Error) -> any Error {
        if error is StoreError { return error }
        let failure = PostgresFailure(error)
        if failure.isUnavailable { return StoreError.unavailable(location, reason: failure.reason, detail: failure.detail) }
        if let error = error as? PSQLError, let info = error.serverInfo {
            if let advice = failure.advice {
                return StoreError.refused(location, state: info[.sqlState] ?? "", message: advice, detail: nil)
            }
            return StoreError.refused(
                location, state: info[.sqlState] ?? "", message: info[.message] ?? "", detail: info[.detail])
        }
        return error
    }
}

/// What an error of postgres-nio (or of the network under it) says about the database.
struct PostgresFailure {
    var isUnavailable: Bool
    /// In the server's own words: what a 503 may say to any client.
    var reason: String
    /// What PostgreSQL said, for the operator's log and the CLI, never for a client.
    var detail: String?
    /// What to change, when PostgreSQL's own words would not say it (a pooler in the way).
    var advice: String?

    /// Why TLS refused the link, in the operator's words: a setting (or an attacker on the path) to look at, not
    /// a moment to wait out.
    private static func tlsRefusal(_ error: PSQLError) -> String? {
        if error.code == .sslUnsupported {
            return "the server offers no TLS, and the URL's sslmode requires it (TLS is off at the server or a "
                + "pooler in front of it, or something on the path removed it)"
        }
        guard let underlying = error.underlying else { return nil }
        let text = String(describing: underlying)
        if let extra = underlying as? NIOSSLExtraError,
            extra == .failedToValidateHostname || extra == .serverHostnameImpossibleToMatch
        {
            return "TLS: the server's certificate does not name the host the URL gives (sslmode=verify-full)"
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "TLS: the server's certificate is not signed by an authority this link trusts (sslrootcert, or "
                + "the system's for verify-full without it)"
        }
        if underlying is NIOSSLError { return "TLS: the handshake failed (\(text))" }
        return nil
    }

    private static func isNoAnswer(_ error: any Error) -> Bool {
        (error as? StoreError)?.code == .noAnswer
    }

    init(_ error: any Error) {
        if let error = error as? PSQLError {
            switch error.code {
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                // Also: the role or the database refused (28, 3D000): a setting to fix, every bundle refused alike.
                // Connection exceptions, the server shutting down or starting, out of resources, a read-only
                // (standby or read-only transaction) server: every bundle would fail the same way.
                if state == "08P01", error.serverInfo?[.message]?.contains("unsupported startup parameter") == true {
                    // PgBouncer refuses the keepalive settings a direct connection sends.
                    isUnavailable = false
                    reason =
                        "a pooler refused the connection's settings (\(error.serverInfo?[.message] ?? "")): add "
                        + "pool_mode=transaction (or pool_mode=session) to the URL (docs/deploy.md)"
                    advice = reason
                } else if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") || state == "25006"
                    || state.hasPrefix("28") || state == "3D000"
                {
                    isUnavailable = true
                    reason = "the database cannot take work now: try again shortly"
                    detail = "PostgreSQL \(state): \(error.serverInfo?[.message] ?? "")"
                } else if state == "26000" || state == "42P05" {
                    // A prepared statement missing, or already there: another server connection than the one that
                    // prepared it, as a pooler in transaction mode lends them.
                    isUnavailable = false
                    reason =
                        "a prepared statement is missing from the connection that prepared it: the database is "
                        + "reached through a pooler in transaction mode (PgBouncer's pool_mode = transaction); add "
                        + "pool_mode=transaction to the URL (docs/deploy.md)"
                    detail = "PostgreSQL \(state): \(error.serverInfo?[.message] ?? "")"
                    advice = reason + " (\(error.serverInfo?[.message] ?? ""))"
                } else {
                    isUnavailable = false
                    reason = error.serverInfo?[.message] ?? "PostgreSQL refused the statement"
                }
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
                .sslUnsupported, .failedToAddSSLHandler:
                isUnavailable = true
                if let refusal = Self.tlsRefusal(error) {
                    reason = "the database link was refused: \(refusal)"
                    detail = "PostgreSQL: \(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
                } else {
                    reason = "the database cannot be reached now: try again shortly"
                    detail = "PostgreSQL: \(error.code)"
                }
            default:
                isUnavailable = false
                reason = "PostgreSQL: \(error.code)"
            }
        } else if error is ChannelError || error is IOError || error is NIOConnectionError || Self.isNoAnswer(error) {
            isUnavailable = true
            reason = "the database cannot be reached now: try again shortly"
        } else {
            isUnavailable = false
            reason = String(describing: error)
        }
    }
}
