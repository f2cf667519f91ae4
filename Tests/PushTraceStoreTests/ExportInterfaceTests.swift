import Foundation
import PushTraceRecords
import PushTraceStore
import PushTraceTestSupport
import Testing

@Suite("Every engine: export and check read every stored line back")
struct ExportInterfaceTests {
    @Test(
        "export gives every accepted line back byte for byte, in the order stored, by app, notification and time",
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

    @Test(
        "a time range finds every line in it, whatever its bundle's received time or clock correction, to the millisecond",
        arguments: TestEngine.all)
    func exportTimeRangeEdges(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        let received: Int64 = 1_763_622_004_321
        func log(_ ts: Int64) -> String {
            #"{"type":"log","ts":\#(ts),"process":"app","level":"info","message":"at \#(ts)"}"#
        }
        // Lines on both sides of second boundaries, long before and after the bundle's arrival (a device or a backend
        // may write any time), at the first and last instants a line may name, and a bundle whose clock is corrected
        // by 12 h 0.5 s.
        let times: [Int64] = [
            received - 86_400_000, received - 1_001, received - 1_000, received - 999, received - 1,
            received, received + 1, received + 999, received + 1_000, received + 3_600_000,
        ]
        // Config lines, recorded long before the upload that carries them, have a span of their own.
        let config = #"{"type":"config","ts":\#(received - 10 * 86_400_000 + 7),"process":"app","app_group":"group.one"}"#
        try temporary.ingest([Lines.manifest(app: "app.one"), config] + times.map(log), receivedAt: received)
        try temporary.ingest(
            [Lines.manifest(app: "app.one", device: "d-2", uploadedAt: received - 43_200_500)]
                + times.map(log), receivedAt: received)
        let bounds = WireBounds.epochMilliseconds
        try temporary.ingest(
            [Lines.manifest(app: "app.one", device: "d-3")] + [log(bounds.lowerBound), log(bounds.upperBound)],
            receivedAt: received)
        var all: [(body: String, ts: Int64?)] = []
        try temporary.store.export(ExportFilter()) { all.append(($0.body, $0.correctedTs)) }
        #expect(all.count == times.count * 2 + 3)
        let corrected = all.compactMap(\.ts)
        let edges = Set(corrected.flatMap { [$0 - 1, $0, $0 + 1] } + [Int64.min, Int64.max])
        for since in edges.sorted() {
            for until in [since &+ 1, since &+ 2, since &+ 1_000, Int64.max] where until > since {
                var got: [String] = []
                try temporary.store.export(ExportFilter(since: since, until: until)) { got.append($0.body) }
                let expected = all.filter { ($0.ts ?? .min) >= since && ($0.ts ?? .max) < until }.map(\.body)
                #expect(got == expected, "since \(since) until \(until)")
            }
        }
    }

    @Test(
        "a simulated corpus: every line of every bundle file comes back once, and the store checks consistent",
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
