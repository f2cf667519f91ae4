import PushTraceCore

/// A pushtrace store, whatever engine keeps it: every role at once (docs/spec.md §7, §9), for what opens it (the
/// server's start, a CLI command) and hands each part of the program only the role it needs.
///
/// Engines (SQLite and PostgreSQL, modules of their own) implement it over the same data model: each bundle's
/// accepted lines in compressed blocks, an index from (app, notification) to those blocks, per-notification
/// summaries and rollups. What a summary or a rollup holds is computed in this module (``NotificationFacts``,
/// ``Rollup``), once, and an engine only stores it. Every method may block on the database: callers off the
/// request path (the server's writers, each on a thread of its own; a CLI command) call them directly; async code hops off its executor.
///
/// Times are epoch milliseconds.
public protocol TraceStore: TraceReader, TraceWriter, TokenStore, StoreUpkeep {
    /// The thresholds causes are settled with.
    var settings: DiagnosisSettings { get }
    /// Finishes pending work (a checkpoint, open connections); the store cannot be used afterwards.
    func close() throws
}

/// Work that one process among those sharing a store does for all of them.
public enum SharedTask: String, Sendable, CaseIterable {
    /// Judging the alert rules and exporting the firing gauge.
    case alertMonitor = "alert-monitor"
}

/// Settled notifications of one app, category and cause (``TraceStore/causeCounts(since:)``).
public struct CauseCount: Sendable, Hashable {
    public var appID: String
    public var category: String?
    public var cause: String
    public var count: Int

    public init(appID: String, category: String?, cause: String, count: Int) {
        self.appID = appID
        self.category = category
        self.cause = cause
        self.count = count
    }
}

/// The batch sizes the store's long work runs in unless a caller says otherwise: each has one definition, here.
public enum StoreDefaults {
    /// Notifications settled per transaction.
    public static let settleBatch = 4_000
    /// Bundles deleted per retention transaction: small enough that ingest commits between them.
    public static let retentionBatch = 5_000
    /// Pages given back to the file system per step.
    public static let releasePagesPerStep = 4_096
}
