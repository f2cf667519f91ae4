import PushTraceStore
import Testing

@testable import PushTracePostgres

/// PostgreSQL keeps a why's two statements prepared by name (`SQLSession.rows(_:preparedAs:)`), their text rendered
/// from the statements the store writes once; a text that changed with the values would be run unprepared instead.
@Suite("PostgreSQL: statements kept prepared")
struct PreparedStatementTextTests {
    @Test("each prepared statement's text is the same whatever its values, which are all bound, never spliced")
    func preparedTextsDependOnNoValue() {
        typealias Reading = BlockReading<PostgresSession>
        let hostile = "io.acme' OR 1 = 1; --"
        for name in SQLPreparedName.allCases {
            let statements: [SQLStatement] =
                switch name {
                case .diagnosis:
                    [Reading.diagnosis(key: 0, appID: ""), Reading.diagnosis(key: -7, appID: hostile)]
                case .configInForce:
                    [
                        Reading.configInForce(appID: "", deviceID: "", at: 0),
                        Reading.configInForce(appID: hostile, deviceID: hostile, at: .min),
                    ]
                }
            let rendered = statements.map { $0.rendered(for: PostgresDialect()) }
            #expect(rendered[0].sql == rendered[1].sql, "\(name)")
            #expect(!rendered[1].sql.contains(hostile), "\(name)")
            let placeholders = (1...rendered[1].binds.count).filter { rendered[1].sql.contains("$\($0)") }
            #expect(placeholders.count == rendered[1].binds.count, "\(name)")
            #expect(rendered[1].binds.contains(.text(hostile)), "\(name)")
        }
    }
}
