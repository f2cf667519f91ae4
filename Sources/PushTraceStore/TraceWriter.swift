import PushTraceCore

/// The ingesting role of a store: the one writer that stores bundles, and the settling of causes after them. The
/// server's writer and `pushtrace ingest` hold only this.
public protocol TraceWriter: StoreAccess {
    /// A session of the one writer that stores bundles, many to a transaction. With `deferringSummaries`, the
    /// bundles' notification summaries are written together later, by ``IngestSession/writeSummaries()``
    /// (the server's writer, which commits small bundles often); a session may decline (``IngestSession/defersSummaries``).
    func makeIngestSession(deferringSummaries: Bool) throws -> any IngestSession
    /// How many groups a process may write at once, each in a session and a transaction of its own: one where the
    /// engine has one writer (SQLite), more where transactions run side by side and a group spends much of its
    /// time waiting on the database's answers (PostgreSQL).
    var concurrentWriters: Int { get }
    /// Settles the causes of notifications that received records since they were last settled, at most `limit`
    /// (all when nil), `batchSize` to a transaction; `progress` is told (settled, total). Returns how many.
    func settleCauses(limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?) throws -> Int
}

extension TraceWriter {
    public var concurrentWriters: Int { 1 }

    /// Stores one bundle in a transaction of its own (see ``IngestGroup/ingest(source:receivedAt:_:)``).
    public func ingest(
        source: String?, receivedAt: Int64,
        _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void
    ) throws -> IngestResult {
        try makeIngestSession(deferringSummaries: false).inGroupCommit { group in
            try group.ingest(source: source, receivedAt: receivedAt, produce)
        }
    }

    /// Settles every notification waiting (at most `limit`).
    @discardableResult
    public func settleCauses(limit: Int? = nil, batchSize: Int = StoreDefaults.settleBatch) throws -> Int {
        try settleCauses(limit: limit, batchSize: batchSize, progress: nil)
    }

    /// Settles every notification waiting, telling `progress` (settled, total).
    @discardableResult
    public func settleCauses(batchSize: Int = StoreDefaults.settleBatch, progress: @escaping (Int, Int) -> Void) throws -> Int {
        try settleCauses(limit: nil, batchSize: batchSize, progress: progress)
    }
}
