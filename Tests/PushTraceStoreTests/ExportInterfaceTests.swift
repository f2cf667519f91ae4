import Foundation
import PushTraceStore
import PushTraceTestSupport
import Testing

@Suite("Every engine: export and check read every stored line back")
struct ExportInterfaceTests {
    @Test("export gives every accepted line back byte for byte, in the order stored, by app, notification and time",
          arguments: TestEngine.all)
    func export(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        // Spacing and key order as a device wrote them: kept exactly.
        let odd = #"{ "type":"log", "ts":1763622000900,"process":"service","level":"info","message":"ünïcödé ✓","notification_id":"n-2" }"#
        let one = [Lines.manifest(app: "app.one")] + Lines.serviceSteps("n-1") + [odd]
        let two = [Lines.manifest(app: "app.two", device: "server")] + Lines.sent("n-3", at: Lines.t0 + 60_000)
        try temporary.ingest(one)
        try temporary.ingest(two)
        func exported(_ filter: ExportFilter) throws -> [String] {
            var lines: [String] = []
            try temporary.store.export(filter) { lines.append($0.body) }
            return lines
        }
        // The manifest is kept as the bundle's row; every record after it comes back.
        let (records1, records2) = (Array(one.dropFirst()), Array(two.dropFirst()))
        #expect(try exported(ExportFilter()) == records1 + records2)
        #expect(try exported(ExportFilter(appID: "app.two")) == records2)
        #expect(try exported(ExportFilter(appID: "app.one", notificationID: "n-2")) == [odd])
        #expect(try exported(ExportFilter(since: Lines.t0 + 60_000)) == records2)
        #expect(try exported(ExportFilter(appID: "app.one", until: Lines.t0 + 900)) == [one[1], one[2]])
        let check = try temporary.store.check()
        #expect(check.isConsistent)
        #expect(check.records == records1.count + records2.count)
    }

    @Test("a simulated corpus: every line of every bundle file comes back once, and the store checks consistent",
          arguments: TestEngine.all)
    func exportSimulated(engine: TestEngine) throws {
        let temporary = try TemporaryStore.simulated(engine: engine, seed: 3, notifications: 300)
        var exported = 0
        try temporary.store.export(ExportFilter()) { _ in exported += 1 }
        let check = try temporary.store.check()
        #expect(check.isConsistent, "\(check)")
        #expect(check.records == exported)
        #expect(try temporary.counts()["record"] == exported)
    }
}
