import Foundation
import PushTracePostgres
import PushTraceSQLite
import PushTraceStore
import PushTraceTestSupport
import Testing

/// The summary row is described once (`NotificationFacts.storedColumns`): each engine's `notification` table and
/// docs/schema.md's table of it hold exactly those columns, and a summary survives a write and a read unchanged.
@Suite("The notification summary, described once")
struct SummaryColumnsTests {
    static let described = Set(["app_id", "notification_id", "cause"] + NotificationFacts.storedColumns.map(\.name))

    @Test("each engine's notification table has exactly the described columns", arguments: TestEngine.all)
    func tableMatches(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        var names: [String] = []
        try temporary.store.readOnlyQuery("SELECT * FROM notification", columns: { names = $0 }, row: { _ in })
        #expect(Set(names) == Self.described)
        #expect(names.count == Self.described.count)
    }

    @Test("docs/schema.md's table of notification names exactly the described columns")
    func documentMatches() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let schema = try String(contentsOf: root.appendingPathComponent("docs/schema.md"), encoding: .utf8)
        let section = try #require(schema.components(separatedBy: "\n## notification — ").dropFirst().first)
        var documented: [String] = []
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("## ") }) where line.hasPrefix("| ") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }.trimmingCharacters(in: .whitespaces)
            guard cell != "column", !cell.hasPrefix("-") else { continue }
            documented += cell.components(separatedBy: ", ")
        }
        #expect(Set(documented) == Self.described, "docs/schema.md's notification table differs from NotificationFacts.storedColumns")
        #expect(documented.count == Self.described.count)
    }

    @Test("a summary read back by column name is the summary written")
    func roundTrip() throws {
        var facts = NotificationFacts()
        facts.deviceID = "d-1"
        facts.category = "DAILY_PICK"
        facts.firstTs = 1_700_000_000_000
        facts.hasAlert = true
        facts.mutableContent = false
        facts.serviceExpired = true
        facts.actions = 3
        facts.downloadBytes = 12_345
        facts.deviceIDFromDevice = true
        facts.actionRows = [("open", "dismiss"), (nil, "doNotDismiss")]
        let columns = SQLColumns(NotificationFacts.storedColumns.map(\.name).reversed())
        let row = SQLRow(columns: columns, values: facts.storedValues.reversed())
        let read = try NotificationFacts(stored: row)
        #expect(read.storedValues == facts.storedValues)
        #expect(read.hasAlert == true && read.mutableContent == false && read.deviceIDFromDevice)
    }

    @Test("a row created empty reads as empty facts: its NULL counts and flags are zero")
    func emptyRow() throws {
        let names = NotificationFacts.storedColumns.map(\.name)
        let row = SQLRow(columns: SQLColumns(names), values: Array(repeating: .null, count: names.count))
        #expect(try NotificationFacts(stored: row).storedValues == NotificationFacts().storedValues)
    }

    @Test("a row without a described column is refused, naming the column")
    func missingColumn() {
        let row = SQLRow(columns: SQLColumns(["device_id"]), values: [.text("d-1")])
        #expect { try NotificationFacts(stored: row) } throws: { ($0 as? StoreError)?.code == .damaged }
    }
}

@Suite("Statements written once, rendered per dialect")
struct SQLStatementTests {
    @Test("values are bound, never spliced: a quote in a value stays a value")
    func bindsValues() {
        let hostile = "x' OR '1'='1"
        let statement: SQLStatement = "SELECT cause FROM notification WHERE app_id = \(hostile) AND records > \(3)"
        let (sql, binds) = statement.rendered(for: PostgresDialect())
        #expect(sql == "SELECT cause FROM notification WHERE app_id = $1 AND records > $2")
        #expect(binds == [.text(hostile), .integer(3)])
        #expect(statement.rendered(for: SQLiteDialect()).sql == "SELECT cause FROM notification WHERE app_id = ? AND records > ?")
    }

    @Test("a search with every filter renders each dialect's words and binds in order")
    func search() {
        let query = SearchQuery(appID: "app", cause: .serviceTimeout, category: "C", deviceID: "d", since: 1, until: 2, limit: 5)
        let (sql, binds) = query.statement(for: PostgresDialect()).rendered(for: PostgresDialect())
        #expect(
            sql.contains(
                "WHERE app_id = $1 AND cause = $2 AND cause NOT IN ('not_expanded', 'ok') AND category = $3 AND device_id = $4 "
                    + "AND first_ts >= $5 AND first_ts < $6"))
        #expect(sql.contains(#"ORDER BY first_ts DESC NULLS LAST, notification_id COLLATE "C" LIMIT $7"#))
        #expect(binds == [.text("app"), .text("service_timeout"), .text("C"), .text("d"), .integer(1), .integer(2), .integer(5)])
        let plain = SearchQuery(limit: 1).statement(for: SQLiteDialect()).rendered(for: SQLiteDialect()).sql
        #expect(!plain.contains("WHERE") && plain.contains("ORDER BY first_ts DESC, notification_id  LIMIT ?"))
    }
}
