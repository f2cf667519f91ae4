import PushTraceCore

/// A store whose reads and tokens are the store's own SQL (``StoreSQL``) over one engine's sessions. The engine
/// gives its ``sql`` and its ``settings``; every read and token call is answered here, the same on every engine.
package protocol SQLStore: TraceReader, TokenStore {
    associatedtype Session: SQLSession
    /// The store's SQL over this engine's transactions.
    var sql: StoreSQL<Session> { get }
    /// The thresholds causes are settled with.
    var settings: DiagnosisSettings { get }
}

extension SQLStore {
    public func appIDs() async throws -> [String] { try await sql.appIDs() }

    public func apps(forNotification id: String) async throws -> [String] { try await sql.apps(forNotification: id) }

    public func why(appID: String, notificationID: String) async throws -> WhyReport {
        try await sql.why(appID: appID, notificationID: notificationID, settings: settings)
    }

    public func logs(appID: String, notificationID: String) async throws -> [TimelineEntry] {
        try await sql.logs(appID: appID, notificationID: notificationID)
    }

    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws { try sql.export(filter, line) }

    /// On SQLite, the summaries a server still holds in memory (its summary backlog) are left out of the recount.
    public func check() throws -> StoreCheck { try sql.check() }

    public func search(_ query: SearchQuery) async throws -> [NotificationSummary] { try await sql.search(query) }

    public func causeCounts(since: Int64) async throws -> [CauseCount] { try await sql.causeCounts(since: since) }

    public func latestConfiguration(appID: String) async throws -> AppConfiguration? {
        try await sql.latestConfiguration(appID: appID)
    }

    public func report(appID: String, period: ReportPeriod) async throws -> DeliveryReport {
        try await sql.report(appID: appID, period: period)
    }

    public func alerts(_ rules: [AlertRule], now: Int64, appID: String?) async throws -> AlertReport {
        try await sql.alerts(rules, now: now, appID: appID)
    }

    public func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] { try sql.alertSamples(spans) }

    public func audienceSamples(_ spans: AlertSpans, appID: String?) throws -> [AlertSample] {
        try sql.audienceSamples(spans, appID: appID)
    }

    public func audiences(period: ReportPeriod) async throws -> [String: AudienceFigures] {
        try await sql.audiences(period: period)
    }

    public func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) async throws -> (TokenInfo, TokenText) {
        try await sql.createToken(appID: appID, scope: scope, label: label, now: now)
    }

    public func tokens() async throws -> [TokenInfo] { try await sql.tokens() }

    public func revokeToken(id: String, now: Int64) async throws -> Bool { try await sql.revokeToken(id: id, now: now) }

    public func storedToken(id: String) async throws -> StoredToken? { try await sql.storedToken(id: id) }
}
