import GRDB
import PushTraceCore
import PushTraceStore
import Testing

@testable import PushTraceSQLite

/// SQLite uses a partial index only where a statement's own words imply its condition: a search by a cause must say
/// so, or it walks the app's time index and reads every row to check its cause.
@Suite("SQLite: searches by cause use their index")
struct SearchPlanTests {
    @Test("a search by any cause but ok and not_expanded reads notification_by_cause; those two the time index")
    func searchByCauseUsesItsIndex() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue)
        try queue.read { db in
            for cause in Cause.allCases {
                let query = SearchQuery(appID: "app", cause: cause, category: "DAILY_PICK", since: 1, until: 2, limit: 50)
                let (sql, binds) = query.statement(for: SQLiteDialect()).rendered(for: SQLiteDialect())
                let plan = try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + sql,
                    arguments: StatementArguments(
                        binds.map { value -> DatabaseValueConvertible? in
                            switch value {
                            case .integer(let n): n
                            case .text(let text): text
                            default: nil
                            }
                        })
                ).map { $0["detail"] as String }.joined(separator: "; ")
                let index = [.ok, .notExpanded].contains(cause) ? "notification_by_time" : "notification_by_cause"
                #expect(plan.contains("USING INDEX \(index) "), "\(cause.rawValue): \(plan)")
            }
        }
    }
}
