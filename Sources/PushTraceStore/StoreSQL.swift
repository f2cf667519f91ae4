/// A store's SQL over one engine: the transactions the engine opens, and what its schema keeps its own way. Every
/// statement is written once, in this type's extensions and the readers they call; an engine makes one of these, and
/// ``SQLStore`` answers its interface from it.
package struct StoreSQL<Session: SQLSession>: Sendable {
    package var layout: BundleLayout
    package var dictionaries: BlockDictionaries
    /// Runs its body in a read of one moment, beside the writer where the engine allows.
    package var read: @Sendable ((Session) throws -> Void) throws -> Void
    /// Runs its body on a session outside any transaction, for reads of one statement (each its own snapshot): the
    /// same as ``read`` where a read transaction costs nothing.
    package var readOne: @Sendable ((Session) throws -> Void) throws -> Void
    /// Runs its body in a transaction that writes.
    package var write: @Sendable ((Session) throws -> Void) throws -> Void
    /// Runs its body as ``read``, ``readOne`` or ``write`` do, where waiting on the database holds up no thread of
    /// the caller's: the caller awaits the answer.
    package var awaited: Awaited

    /// Which of the engine's transactions an awaited body runs in.
    package enum Transaction: Sendable { case read, readOne, write }

    /// A session that answers at once runs the body inline (``InlineExecutor``); one that waits on a network awaits
    /// its answers.
    package typealias Awaited =
        @Sendable (
            Transaction, _ body: @escaping @Sendable (Session) async throws -> any Sendable
        ) async throws -> any Sendable

    package init(
        layout: BundleLayout, dictionaries: BlockDictionaries, read: @escaping @Sendable ((Session) throws -> Void) throws -> Void,
        readOne: (@Sendable ((Session) throws -> Void) throws -> Void)? = nil,
        write: @escaping @Sendable ((Session) throws -> Void) throws -> Void,
        awaited: @escaping Awaited
    ) {
        (self.layout, self.dictionaries, self.read, self.write, self.awaited) = (layout, dictionaries, read, write, awaited)
        self.readOne = readOne ?? read
    }

    /// `body` run in `transaction` (``awaited``), answering what it answers.
    package func awaiting<T: Sendable>(
        _ transaction: Transaction, _ body: @escaping @Sendable (Session) async throws -> T
    ) async throws -> T {
        // The engine hands back what the body answered: a `T`.
        try await awaited(transaction) { session in try await body(session) } as! T
    }

    /// ``read``, answering what `body` answers. The body is the store's async SQL, run inline on the engine's
    /// session (``InlineExecutor``): a synchronous caller's session answers at once.
    package func reading<T>(_ body: (Session) async throws -> T) throws -> T {
        var result: T?
        try read { session in result = try InlineExecutor.run { try await body(session) } }
        return result!
    }

    /// ``readOne``, answering what `body` answers (run as ``reading(_:)`` runs it).
    package func readingOne<T>(_ body: (Session) async throws -> T) throws -> T {
        var result: T?
        try readOne { session in result = try InlineExecutor.run { try await body(session) } }
        return result!
    }

    /// ``write``, answering what `body` answers (run as ``reading(_:)`` runs it).
    package func writing<T>(_ body: (Session) async throws -> T) throws -> T {
        var result: T?
        try write { session in result = try InlineExecutor.run { try await body(session) } }
        return result!
    }

    /// A block dictionary by its Adler-32, read on `session` the first time.
    package func dictionary(_ session: Session) -> (UInt32) -> [UInt8]? {
        { [dictionaries] in dictionaries.lookup($0, session) }
    }

    /// The store's block reads (``BlockReading``) on `session`.
    package func blocks(_ session: Session) -> BlockReading<Session> {
        BlockReading(session, dictionary: dictionary(session))
    }
}
