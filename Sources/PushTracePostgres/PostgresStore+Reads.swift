import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// The store's SQL (``StoreSQL``) over this database: a read of several statements in a repeatable-read
    /// transaction, a read of one outside any.
    var sql: StoreSQL<PostgresSession> {
        StoreSQL(
            layout: .postgres, dictionaries: dictionaries, read: { [self] body in try reading(body) },
            readOne: { [self] body in try withSession(body) }, write: { [self] body in try writing(body) },
            awaited: { [self] transaction, body in
                try await threads.runIfActive {
                    switch transaction {
                    case .read: try self.reading(body)
                    case .readOne: try self.withSession(body)
                    case .write: try self.writing(body)
                    }
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

/// The statements ``BlockReading`` names for preparing, written there once, rendered for PostgreSQL.
extension PostgresSession {
    func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) throws -> [SQLRow] {
        let (sql, binds) = statement.rendered(for: dialect)
        let text: any PreparedText.Type =
            switch name {
            case .diagnosis: DiagnosisText.self
            case .configInForce: ConfigInForceText.self
            }
        // The prepared text depends on no value; were this call's another, it runs as written rather than as that.
        guard sql == text.sql else { return try sqlRows(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(binds))) }
        return switch name {
        case .diagnosis: try Self.sqlRows(query(Prepared<DiagnosisText>(binds: binds)))
        case .configInForce: try Self.sqlRows(query(Prepared<ConfigInForceText>(binds: binds)))
        }
    }
}

/// The text of one statement ``BlockReading`` writes, as PostgreSQL's dialect renders it.
private protocol PreparedText {
    static var name: SQLPreparedName { get }
    static var sql: String { get }
}

private enum DiagnosisText: PreparedText {
    static let name = SQLPreparedName.diagnosis
    static let sql = BlockReading<PostgresSession>.diagnosis(key: 0, appID: "").rendered(for: PostgresDialect()).sql
}

private enum ConfigInForceText: PreparedText {
    static let name = SQLPreparedName.configInForce
    static let sql = BlockReading<PostgresSession>.configInForce(appID: "", deviceID: "", at: 0).rendered(for: PostgresDialect()).sql
}

/// A statement postgres-nio prepares once per connection, by its name.
private struct Prepared<Text: PreparedText>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static var name: String { Text.name.rawValue }
    static var sql: String { Text.sql }
    let binds: [SQLValue]

    func makeBindings() throws -> PostgresBindings { PostgresSession.bindings(binds) }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
