import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The store's SQL (``StoreSQL``) over this file: reads are WAL readers beside the one writer, each its own
    /// snapshot, so a read never waits for a write.
    var sql: StoreSQL<SQLiteSession> {
        StoreSQL(
            layout: .sqlite, dictionaries: dictionaries,
            read: { [pool] body in try pool.read { try body(SQLiteSession(db: $0)) } },
            write: { [pool] body in try pool.write { try body(SQLiteSession(db: $0)) } },
            awaited: { [pool] transaction, body in
                // GRDB's own threads run the body; the caller awaits it.
                switch transaction {
                case .read, .readOne: try await pool.read { try body(SQLiteSession(db: $0)) }
                case .write: try await pool.write { try body(SQLiteSession(db: $0)) }
                }
            })
    }

    public func appIDs() async throws -> [String] { try await sql.appIDs() }

    public func apps(forNotification id: String) async throws -> [String] { try await sql.apps(forNotification: id) }

    public func why(appID: String, notificationID: String) async throws -> WhyReport {
        try await sql.why(appID: appID, notificationID: notificationID, settings: settings)
    }

    public func logs(appID: String, notificationID: String) async throws -> [TimelineEntry] {
        try await sql.logs(appID: appID, notificationID: notificationID)
    }

    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws { try sql.export(filter, line) }

    /// Summaries a server still holds in memory (``SummaryBacklog``) are left out of the recount.
    public func check() throws -> StoreCheck { try sql.check() }

    public func search(_ query: SearchQuery) async throws -> [NotificationSummary] { try await sql.search(query) }

    public func causeCounts(since: Int64) throws -> [CauseCount] { try sql.causeCounts(since: since) }

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

extension BlockReading<SQLiteSession> {
    /// The store's block reads on one connection, inside its read or write access.
    init(_ db: Database, dictionaries: BlockDictionaries) {
        self.init(SQLiteSession(db: db)) { dictionaries.lookup($0, in: db) }
    }

    /// The lines of the blocks `statement` selects (with ``columns``), one block at a time, in the order it gives.
    func forEachLine(_ statement: SQLStatement, _ body: (StoredLine) throws -> Void) throws {
        try session.each(statement) { row in try reader.forEachLine(of: Self.block(row), body) }
    }
}

extension BlockDictionaries {
    /// The dictionary a block's header names, read on this connection the first time.
    func lookup(_ identifier: UInt32, in db: Database) -> [UInt8]? { lookup(identifier, SQLiteSession(db: db)) }
}
