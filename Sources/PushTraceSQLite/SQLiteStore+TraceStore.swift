import PushTraceCore
import PushTraceStore

extension SQLiteStore: TraceStore, SQLStore {
    /// The database file.
    public var location: String { path }

    /// A session whose deferred summaries, when granted, live in a ``SummaryBacklog``: declined (summaries written
    /// with each commit) when another live process keeps the backlog of this database.
    public func makeIngestSession(deferringSummaries: Bool) throws -> any IngestSession {
        SQLiteIngestSession(store: self, backlog: deferringSummaries ? try makeSummaryBacklog() : nil)
    }

    public func readOnlyQuery(
        _ sql: String, columns: ([String]) throws -> Void,
        row: ([QueryValue]) throws -> Void
    ) throws {
        try Self.query(path: path, sql: sql, columns: columns, row: row)
    }

    public func explaining(_ error: any Error) -> any Error {
        StoreError.explaining(error, path: path)
    }
}

/// The writer's session on an SQLite store: group commits, with the summaries deferred to a backlog when it has one.
final class SQLiteIngestSession: IngestSession {
    private let store: SQLiteStore
    private let backlog: SummaryBacklog?

    init(store: SQLiteStore, backlog: SummaryBacklog?) {
        self.store = store
        self.backlog = backlog
    }

    var defersSummaries: Bool { backlog != nil }

    var hasPendingSummaries: Bool { backlog?.isEmpty == false }

    func summariesDue(after delay: Duration, notifications: Int) -> Bool {
        backlog?.isDue(after: delay, notifications: notifications) ?? false
    }

    func writeSummaries() throws {
        if let backlog, !backlog.isEmpty { try store.writeSummaries(backlog) }
    }

    func inGroupCommit<T>(_ body: (any IngestGroup) throws -> T) throws -> T {
        try store.inGroupCommit(deferringSummariesTo: backlog) { group in try body(group) }
    }
}
