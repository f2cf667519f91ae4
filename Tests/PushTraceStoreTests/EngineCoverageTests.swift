import Foundation
import PushTraceTestSupport
import Testing

@Suite("Which engines the interface suite runs on")
struct EngineCoverageTests {
    @Test("when PostgreSQL is required (make test), a test cluster is given and the suite runs on both engines")
    func postgresRequired() {
        guard ProcessInfo.processInfo.environment["PUSHTRACE_REQUIRE_POSTGRES"] == "1" else { return }
        #expect(TestEngine.postgresCluster != nil, "make test runs the suite beside scripts/with-postgres.sh")
        #expect(TestEngine.all == [.sqlite, .postgres])
    }
}
