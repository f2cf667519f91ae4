import PushTraceCore

/// A pushtrace store, whatever engine keeps it: what the server, the CLI and the reports ask of it (docs/spec.md §7, §9).
///
/// Engines (SQLite, a module of its own; PostgreSQL next) implement it over the same data model: each bundle's
/// accepted lines in compressed blocks, an index from (app, notification) to those blocks, per-notification
/// summaries and rollups. What a summary or a rollup holds is computed in this module (``NotificationFacts``,
/// ``Rollup``), once, and an engine only stores it. Every method may block on the database: callers off the
/// request path (the server's writer thread, a CLI command) call them directly; async code hops off its executor.
///
/// Times are epoch milliseconds.
public protocol TraceStore: AnyObject, Sendable {
    /// Where the store lives, for logs and messages: a file path, or a database URL without its password.
    var location: String { get }
    /// The thresholds causes are settled with.
    var settings: DiagnosisSettings { get }
    /// Finishes pending work (a checkpoint, open connections); the store cannot be used afterwards.
    func close() throws

    // MARK: Ingest

    /// A session of the one writer that stores bundles, many to a transaction. With `deferringSummaries`, the
    /// bundles' notification summaries are written together later, by ``IngestSession/writeSummaries()``
    /// (the server's writer, which commits small bundles often); a session may decline (``IngestSession/defersSummaries``).
    func makeIngestSession(deferringSummaries: Bool) throws -> any IngestSession
    /// Settles the causes of notifications that received records since they were last settled, at most `limit`
    /// (all when nil), `batchSize` to a transaction; `progress` is told (settled, total). Returns how many.
    func settleCauses(limit: Int?, batchSize: Int, progress: ((Int, Int) -> Void)?) throws -> Int

    // MARK: Reads

    /// Every app with a stored notification, sorted.
    func appIDs() throws -> [String]
    /// The apps a notification ID is stored for, sorted (usually one).
    func apps(forNotification id: String) throws -> [String]
    /// Why the notification's card showed or not (docs/spec.md §6), from its stored records.
    func why(appID: String, notificationID: String) throws -> WhyReport
    /// The notification's records in corrected time order.
    func logs(appID: String, notificationID: String) throws -> [TimelineEntry]
    /// Notification summaries that match `query`, latest first.
    func search(_ query: SearchQuery) throws -> [NotificationSummary]
    /// Settled notifications first seen at or after `since`, counted by app, category and cause.
    func causeCounts(since: Int64) throws -> [CauseCount]
    /// The delivery report of one app over `period`, beside the period before it.
    func report(appID: String, period: ReportPeriod) throws -> DeliveryReport
    /// The alert rules judged at `now`, over every app or one.
    func alerts(_ rules: [AlertRule], now: Int64, appID: String?) throws -> AlertReport
    /// The latest configuration each process of the app recorded, or nil when none did.
    func latestConfiguration(appID: String) throws -> AppConfiguration?
    /// Every stored line `filter` selects, exactly as received, one at a time, in the order stored: memory stays
    /// bounded however many there are.
    func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws
    /// Every block read back and recounted against the counts kept beside it.
    func check() throws -> StoreCheck
    /// `pushtrace sql`: one statement run read-only (a statement that would write is refused with
    /// ``ReadOnlyQueryError/wouldWrite``), its column names, then its rows as they are read.
    func readOnlyQuery(_ sql: String, columns: ([String]) throws -> Void, row: ([QueryValue]) throws -> Void) throws

    // MARK: Tokens (docs/spec.md §8)

    /// A new token; its secret is returned once and only its hash is kept.
    func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) throws -> (TokenInfo, TokenText)
    /// Every token, revoked ones included, oldest first.
    func tokens() throws -> [TokenInfo]
    /// Revokes a token; false when there is no such token or it was revoked already.
    func revokeToken(id: String, now: Int64) throws -> Bool
    /// The token stored under `id`, revoked or not, or nil when there is none: one indexed read. Checking a bearer
    /// text against it is ``StoredToken/verifying(_:)``'s, the same for every engine.
    func storedToken(id: String) throws -> StoredToken?

    // MARK: Upkeep

    /// Deletes the lines and rejected lines of bundles received before `cutoff` (their rows stay, marked pruned, so a
    /// late re-upload is still a duplicate), summaries whose records all precede it, superseded config records and
    /// the bodies none refers to, minute-rollup rows, and (an engine that can) the dictionaries a newer one replaced that no block names; `batchSize` bundles to a transaction; `progress` is told after each and stops the work by returning
    /// false. Rollups keep their counts.
    func deleteExpired(before cutoff: Int64, batchSize: Int, progress: ((RetentionReport) -> Bool)?) throws -> RetentionReport
    /// Whether deleted data's room is given back in place (``releaseFreePages(pagesPerStep:progress:)``) rather
    /// than by a rebuild (``vacuum(starting:)``).
    func releasesInPlace() throws -> Bool
    /// Gives freed room back to the file system in steps; `progress` (released, to go) stops it by returning false.
    /// Returns the bytes released.
    func releaseFreePages(pagesPerStep: Int, progress: ((_ released: Int64, _ toGo: Int64) -> Bool)?) throws -> Int64
    /// Rebuilds the store's files compactly; `starting` is told the room it needs before it begins.
    func vacuum(starting: ((RebuildRoom) -> Void)?) throws
    /// Recomputes every rollup from the settled summaries.
    func rebuildRollups() throws

    // MARK: Copying (``StoreCopy``)

    /// Reads the whole store out, in one snapshot, a page at a time, in the order of ``CopiedPart``. Fails with
    /// ``StoreCopyError/sourceBusy(_:)`` when a process writing it keeps work it has not stored yet.
    func copyOut(_ part: (CopiedPart) throws -> Void) throws
    /// A writer of a copy into this store; fails with ``StoreCopyError/targetNotEmpty(_:table:)`` unless the store
    /// holds nothing.
    func makeCopyTarget() throws -> any StoreCopyTarget

    /// Whether this process is the one that runs `task` among every process sharing the store, taking the role
    /// when no live process holds it. A store one process writes (SQLite) always answers true.
    func leads(_ task: SharedTask) throws -> Bool

    // MARK: Failures

    /// Whether `error` means the storage cannot commit now (unreachable, locked, full, read-only) rather than that
    /// one bundle could not be stored: retrying bundle by bundle would only fail each the same way.
    func isUnavailable(_ error: any Error) -> Bool
    /// Why the storage could not commit, in words a client of the server can act on, without paths or SQL.
    func unavailableReason(_ error: any Error) -> String
    /// `error` in the operator's terms where it has some (``StoreError``); anything else as it came.
    func explaining(_ error: any Error) -> any Error
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

extension TraceStore {
    /// One process writes the store: it leads every shared task.
    public func leads(_ task: SharedTask) throws -> Bool { true }

    /// Stores one bundle in a transaction of its own (see ``IngestGroup/ingest(source:receivedAt:_:)``).
    public func ingest(
        source: String?, receivedAt: Int64,
        _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void
    ) throws -> IngestResult {
        try makeIngestSession(deferringSummaries: false).inGroupCommit { group in
            try group.ingest(source: source, receivedAt: receivedAt, produce)
        }
    }

    /// The live token a bearer text names, or nil (malformed, unknown, revoked, a wrong secret, an unknown scope).
    public func verifyToken(_ bearer: String) throws -> TokenInfo? {
        guard let text = TokenText(bearer) else { return nil }
        return try storedToken(id: text.id)?.verifying(text)
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

    /// Every rule over every app.
    public func alerts(_ rules: [AlertRule], now: Int64) throws -> AlertReport {
        try alerts(rules, now: now, appID: nil)
    }

    /// Deletes what was received before `cutoff`, ``StoreDefaults/retentionBatch`` bundles to a transaction.
    public func deleteExpired(before cutoff: Int64, progress: ((RetentionReport) -> Bool)? = nil) throws -> RetentionReport {
        try deleteExpired(before: cutoff, batchSize: StoreDefaults.retentionBatch, progress: progress)
    }

    @discardableResult
    public func releaseFreePages(progress: ((_ released: Int64, _ toGo: Int64) -> Bool)? = nil) throws -> Int64 {
        try releaseFreePages(pagesPerStep: StoreDefaults.releasePagesPerStep, progress: progress)
    }

    public func vacuum() throws { try vacuum(starting: nil) }
}
