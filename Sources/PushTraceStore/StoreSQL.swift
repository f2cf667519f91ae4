/// A store's SQL over one engine: the transactions the engine opens, and what its schema keeps its own way. Every
/// statement is written once, in this type's extensions and the readers they call; an engine makes one of these and
/// forwards its interface to it.
package struct StoreSQL<Session: SQLSession> {
    package var layout: BundleLayout
    package var dictionaries: BlockDictionaries
    /// Runs its body in a read of one moment, beside the writer where the engine allows.
    package var read: ((Session) throws -> Void) throws -> Void
    /// Runs its body on a session outside any transaction, for reads of one statement (each its own snapshot): the
    /// same as ``read`` where a read transaction costs nothing.
    package var readOne: ((Session) throws -> Void) throws -> Void
    /// Runs its body in a transaction that writes.
    package var write: ((Session) throws -> Void) throws -> Void

    package init(
        layout: BundleLayout, dictionaries: BlockDictionaries, read: @escaping ((Session) throws -> Void) throws -> Void,
        readOne: (((Session) throws -> Void) throws -> Void)? = nil, write: @escaping ((Session) throws -> Void) throws -> Void
    ) {
        (self.layout, self.dictionaries, self.read, self.write) = (layout, dictionaries, read, write)
        self.readOne = readOne ?? read
    }

    /// ``read``, answering what `body` answers.
    package func reading<T>(_ body: (Session) throws -> T) throws -> T {
        var result: T?
        try read { result = try body($0) }
        return result!
    }

    /// ``readOne``, answering what `body` answers.
    package func readingOne<T>(_ body: (Session) throws -> T) throws -> T {
        var result: T?
        try readOne { result = try body($0) }
        return result!
    }

    /// ``write``, answering what `body` answers.
    package func writing<T>(_ body: (Session) throws -> T) throws -> T {
        var result: T?
        try write { result = try body($0) }
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
