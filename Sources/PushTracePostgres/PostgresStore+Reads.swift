import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// The store's SQL (``StoreSQL``) over this database: a read of several statements in a repeatable-read
    /// transaction, a read of one outside any.
    package var sql: StoreSQL<PostgresSession> {
        StoreSQL(
            layout: .postgres, dictionaries: dictionaries, read: { [self] body in try reading(body) },
            readOne: { [self] body in try withSession(body) }, write: { [self] body in try writing(body) },
            awaited: { [self] transaction, body in try await awaiting(transaction, body) })
    }
}

/// The statements ``BlockReading`` names for preparing, written there once, rendered for PostgreSQL.
extension PostgresSession {
    package func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) throws -> [SQLRow] {
        switch prepared(statement, as: name) {
        case .diagnosis(let statement): try Self.sqlRows(query(statement))
        case .configInForce(let statement): try Self.sqlRows(query(statement))
        case .unprepared(let query): try sqlRows(query)
        }
    }

    package func rows(_ statement: SQLStatement, preparedAs name: SQLPreparedName) async throws -> [SQLRow] {
        switch prepared(statement, as: name) {
        case .diagnosis(let statement): try Self.sqlRows(await query(statement))
        case .configInForce(let statement): try Self.sqlRows(await query(statement))
        case .unprepared(let query): try Self.sqlRows(await self.query(query))
        }
    }

    /// The prepared statement `statement` is. The prepared text depends on no value; were this call's another, it
    /// runs as written rather than as that.
    private func prepared(_ statement: SQLStatement, as name: SQLPreparedName) -> PreparedCall {
        let (sql, binds) = statement.rendered(for: dialect)
        switch name {
        case .diagnosis where sql == DiagnosisText.sql: return .diagnosis(Prepared(binds: binds))
        case .configInForce where sql == ConfigInForceText.sql: return .configInForce(Prepared(binds: binds))
        default: return .unprepared(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(binds)))
        }
    }
}

/// A statement ``BlockReading`` names, as it is sent.
private enum PreparedCall {
    case diagnosis(Prepared<DiagnosisText>)
    case configInForce(Prepared<ConfigInForceText>)
    case unprepared(PostgresQuery)
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
