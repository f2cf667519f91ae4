import Foundation
import PushTraceCore
import PushTraceStore
import PushTraceTestSupport
import Testing

@Suite("Every engine: reports, alerts, rollups, retention")
struct ReportInterfaceTests {
    static let app = "net.rorklab.dailypick"
    static let week = ReportPeriod(isoWeek: "2026-W46")!

    /// A report as JSON with sorted keys: two reports of the same figures compare equal byte for byte.
    static func reportJSON(_ store: any TraceStore, period: ReportPeriod = week) async throws -> String {
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        return String(decoding: try await sorted.encode(store.report(appID: app, period: period)), as: UTF8.self)
    }

    @Test(
        "golden files: the text and JSON reports of seeded simulated data (PUSHTRACE_UPDATE_GOLDEN=1 rewrites them)",
        arguments: TestEngine.all)
    func golden(engine: TestEngine) async throws {
        let temporary = try TemporaryStore.simulated(engine: engine)
        let report = try await temporary.store.report(appID: Self.app, period: Self.week)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let outputs = [
            ("report-2026-W46.txt", ReportText.text(report)),
            ("report-2026-W46.json", String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"),
            ("report-2026-W46.md", ReportText.markdown(report)),
        ]
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
        for (name, output) in outputs {
            let file = folder.appendingPathComponent(name)
            if ProcessInfo.processInfo.environment["PUSHTRACE_UPDATE_GOLDEN"] == "1" {
                try output.write(to: file, atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOf: file, encoding: .utf8)
            #expect(output == expected, "\(name) differs; if the change is intended, rerun with PUSHTRACE_UPDATE_GOLDEN=1")
        }
        // The text reads at 80 columns.
        #expect(ReportText.text(report).split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test(
        "rollups recomputed from the settled summaries equal the rollups kept as notifications were settled",
        arguments: TestEngine.all)
    func rebuiltRollups(engine: TestEngine) async throws {
        let temporary = try TemporaryStore.simulated(engine: engine, seed: 5, notifications: 1_500)
        let store = temporary.store
        let now = try #require(InstantText.parse("2026-11-12T15:00:00Z"))
        func alertsJSON() async throws -> String {
            let sorted = JSONEncoder()
            sorted.outputFormatting = .sortedKeys
            return String(decoding: try await sorted.encode(store.alerts(AlertRule.builtIn, now: now)), as: UTF8.self)
        }
        // A row's example is the latest notification settled into it: a rebuild, in another order, may name
        // another one of the same cause. Every other figure is the same.
        func figures() async throws -> (report: [String: Any], examples: [String: String]) {
            let json = try await Self.reportJSON(store)
            var report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let examples = try #require(report.removeValue(forKey: "cause_examples") as? [String: String])
            return (report, examples)
        }
        let (report, alerts) = (try await figures(), try await alertsJSON())
        try store.rebuildRollups()
        let rebuilt = try await figures()
        #expect(NSDictionary(dictionary: rebuilt.report) == NSDictionary(dictionary: report.report))
        #expect(rebuilt.examples.keys.sorted() == report.examples.keys.sorted())
        for (cause, id) in rebuilt.examples {
            #expect(try await store.why(appID: Self.app, notificationID: id).diagnosis.cause.rawValue == cause)
        }
        #expect(try await alertsJSON() == alerts)
    }

    @Test(
        "retention deletes old bundles and their lines; the week's report keeps its figures; a pruned bundle is still a duplicate",
        arguments: TestEngine.all)
    func retentionKeepsReports(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let old = [Lines.manifest(bundle: "old")] + Lines.serviceSteps("n-old", expired: true)
        try temporary.ingest(old, receivedAt: Lines.t0)
        try temporary.ingest(
            [Lines.manifest(bundle: "new")] + Lines.serviceSteps("n-new", at: Lines.t0 + 86_400_000),
            receivedAt: Lines.t0 + 86_400_000)
        try temporary.store.settleCauses()
        let week = try #require(ReportPeriod(isoWeek: "2026-W47"))
        let before = try await Self.reportJSON(temporary.store, period: week)
        let keptBefore = try await temporary.store.why(appID: Self.app, notificationID: "n-new").timeline.map(\.record.event)
        #expect(keptBefore == ["service.received", "service.delivered"])
        let report = try temporary.store.deleteExpired(before: Lines.t0 + 3_600_000)
        #expect(report.bundles == 1)
        #expect(try await temporary.store.why(appID: Self.app, notificationID: "n-new").timeline.map(\.record.event) == keptBefore)
        #expect(try await temporary.store.apps(forNotification: "n-old").isEmpty)
        #expect(try await Self.reportJSON(temporary.store, period: week) == before)
        #expect(try temporary.ingest(old, receivedAt: Lines.t0).duplicate)
        #expect(try temporary.store.check().isConsistent)
    }
}
