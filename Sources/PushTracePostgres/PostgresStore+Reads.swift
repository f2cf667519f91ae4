import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    public func appIDs() throws -> [String] {
        try reading { try AppRows.all($0) }
    }

    public func apps(forNotification id: String) throws -> [String] {
        try reading { try AppRows.storing(notification: NotificationKey.normalize(id), $0) }
    }

    /// A why is read with two statements (``BlockReading/input(appID:notificationID:)``): the blocks and last-seen
    /// times, then the config in force, which the first event's time picks; a config record committed in between may
    /// be taken, as it would by a why a moment later. A notification whose device none of its bundles names (a
    /// `push.sent` alone) is read again in one read-only transaction, statement by statement.
    public func why(appID: String, notificationID: String) throws -> WhyReport {
        let key = NotificationKey.normalize(notificationID)
        // On the same connection either way: a session whose work threw is closed, and a new connection costs more
        // than the why.
        let input = try withSession { session in
            let reader = blocks(session)
            if let input = try reader.input(appID: appID, notificationID: key) { return input }
            return try session.transaction("ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let lines = try reader.lines(appID: appID, notificationID: key)
                return try reader.input(appID: appID, notificationID: key, lines: lines, cut: reader.cut)
            }
        }
        return WhyReport(input: input, diagnosis: Diagnoser(settings: settings).diagnose(input))
    }

    /// One statement, so one snapshot without a transaction around it.
    public func logs(appID: String, notificationID: String) throws -> [TimelineEntry] {
        let key = NotificationKey.normalize(notificationID)
        return try withSession { session in
            DiagnosisAssembly.entries(try blocks(session).lines(appID: appID, notificationID: key), type: "log")
        }
    }

    /// Every accepted line `filter` selects, in the order stored, one at a time, in one snapshot (repeatable read).
    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        try reading { session in try blocks(session).export(filter, line) }
    }

    /// Reads every block back and recounts what the store keeps about its lines (``BlockReading/check(summarized:)``),
    /// in one snapshot. Summaries are written with their bundles: every bundle's count.
    public func check() throws -> StoreCheck {
        try reading { session in try blocks(session).check(summarized: "true") }
    }

    public func search(_ query: SearchQuery) throws -> [NotificationSummary] {
        try reading { try $0.search(query) }
    }

    public func causeCounts(since: Int64) throws -> [CauseCount] {
        try reading { try $0.causeCounts(since: since) }
    }

    public func latestConfiguration(appID: String) throws -> AppConfiguration? {
        try reading { session in
            try ConfigurationReading.latest(appID: appID, session) { [dictionaries] in dictionaries.lookup($0, session) }
        }
    }

    /// The store's block reads (``BlockReading``) on one session.
    func blocks(_ session: PostgresSession) -> BlockReading<PostgresSession> {
        BlockReading(session) { [dictionaries] in dictionaries.lookup($0, session) }
    }
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
