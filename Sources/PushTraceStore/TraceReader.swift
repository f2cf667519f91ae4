import PushTraceCore

/// The reading role of a store: `why`, `search`, `logs`, reports and alerts, exports and checks. The server's read
/// routes and the CLI's query commands hold only this.
///
/// The reads a request asks for are awaited: the engine waits on the database where no caller's thread is held
/// up. Exports, checks and `pushtrace sql` (which stream to their caller as they read) are called from a thread that
/// may wait.
public protocol TraceReader: StoreAccess {
    /// Every app with a stored notification, sorted.
    func appIDs() async throws -> [String]
    /// The apps a notification ID is stored for, sorted (usually one).
    func apps(forNotification id: String) async throws -> [String]
    /// Why the notification's card showed or not (docs/protocol.md#causes), from its stored records.
    func why(appID: String, notificationID: String) async throws -> WhyReport
    /// The notification's records in corrected time order.
    func logs(appID: String, notificationID: String) async throws -> [TimelineEntry]
    /// Notification summaries that match `query`, latest first.
    func search(_ query: SearchQuery) async throws -> [NotificationSummary]
    /// Settled notifications first seen at or after `since`, counted by app, category and cause.
    func causeCounts(since: Int64) async throws -> [CauseCount]
    /// The delivery report of one app over `period`, beside the period before it.
    func report(appID: String, period: ReportPeriod) async throws -> DeliveryReport
    /// The alert rules judged at `now`, over every app or one.
    func alerts(_ rules: [AlertRule], now: Int64, appID: String?) async throws -> AlertReport
    /// Each app's audience over `period` (devices active in it, by their latest notification settings at its end);
    /// apps with no such device are left out.
    func audiences(period: ReportPeriod) async throws -> [String: AudienceFigures]
    /// The latest configuration each process of the app recorded, or nil when none did.
    func latestConfiguration(appID: String) async throws -> AppConfiguration?
    /// Every stored line `filter` selects, exactly as received, one at a time, in the order stored: memory stays
    /// bounded however many there are.
    func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws
    /// Every block read back and recounted against the counts kept beside it.
    func check() throws -> StoreCheck
    /// `pushtrace sql`: one statement run read-only (a statement that would write is refused with
    /// ``StoreError/wouldWrite``), its column names, then its rows as they are read.
    func readOnlyQuery(_ sql: String, columns: ([String]) throws -> Void, row: ([QueryValue]) throws -> Void) throws
}

extension TraceReader {
    /// Every rule over every app.
    public func alerts(_ rules: [AlertRule], now: Int64) async throws -> AlertReport {
        try await alerts(rules, now: now, appID: nil)
    }
}
