import Foundation
import PushTraceCore
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

/// The same bundles stored on every engine give the same answers, byte for byte (docs/spec.md §9).
@Suite("Every engine answers alike")
struct CrossEngineTests {
    @Test(
        "make demo's corpus on SQLite and on PostgreSQL: every why, the weekly report of each app, and the alerts in the campaign's hour are the same JSON",
        .enabled(if: TestEngine.all.contains(.postgres)))
    func demoCorpusAnswersAlike() async throws {
        let incident = try #require(InstantText.parse("2026-11-14T18:00:00Z"))
        let options = SimulationOptions(seed: 42, notifications: 600, incident: SimulatedIncident(start: incident))
        let stores = try [TestEngine.sqlite, .postgres].map { engine in
            let temporary = try TemporaryStore(engine: engine)
            let bundles = temporary.directory.appendingPathComponent("bundles")
            _ = try Simulator.run(options, into: bundles)
            try temporary.ingestFiles(in: bundles)
            return temporary
        }
        try await expectSameAnswers(stores[0].store, stores[1].store, incident: incident)
        #expect(try await stores[0].store.alerts(AlertRule.builtIn, now: incident + 60 * 60_000).firing.count > 0)
        #expect(try stores[1].store.check().isConsistent)
    }

    @Test(
        "pushtrace copy: make demo's corpus, pruned bundles, rejected lines and tokens, copied from SQLite to every engine and back, answer alike and lose nothing"
    )
    func copiedStoresAnswerAlike() async throws {
        let incident = try #require(InstantText.parse("2026-11-14T18:00:00Z"))
        let options = SimulationOptions(seed: 42, notifications: 300, incident: SimulatedIncident(start: incident))
        let source = try TemporaryStore(engine: .sqlite)
        let bundles = source.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(options, into: bundles)
        try source.ingestFiles(in: bundles)
        // A bundle received long ago, pruned by retention (only its row stays), and one holding a rejected line.
        let old = Lines.manifest(bundle: "old-bundle", device: "d-old")
        let oldLines = [old] + Lines.sent("old-1", at: Lines.t0 - 400 * 86_400_000)
        try source.ingest(oldLines, receivedAt: Lines.t0 - 400 * 86_400_000)
        let retention = try source.store.deleteExpired(before: Lines.t0 - 399 * 86_400_000)
        #expect(retention.bundles == 1)
        try source.ingest([Lines.manifest(bundle: "with-rejection")] + Lines.sent("kept-1") + [#"{"type":"event","ts":"soon"}"#])
        try source.store.settleCauses()
        let (_, reader) = try await source.store.createToken(appID: nil, scope: .admin, label: "ops", now: Lines.t0)
        let (revoked, _) = try await source.store.createToken(appID: "net.rorklab.dailypick", scope: .ingest, label: nil, now: Lines.t0)
        #expect(try await source.store.revokeToken(id: revoked.id, now: Lines.t0 + 1))

        // A running server keeps a summary backlog: its store is not copied until it stops.
        do {
            let backlog = try source.sqlite.makeSummaryBacklog()
            #expect(backlog != nil)
            #expect(throws: StoreError.copySourceBusy(source.store.location)) {
                try StoreCopy.run(from: source.store, to: TemporaryStore().store)
            }
            withExtendedLifetime(backlog) {}
        }

        // SQLite → each engine → a new SQLite file: every step a store that answers as the source does.
        var from = source
        for engine in TestEngine.all + [.sqlite] {
            let target = try TemporaryStore(engine: engine)
            let tally = try StoreCopy.run(from: from.store, to: target.store)
            #expect(tally.bundles == tally.bundlesInSource)
            #expect(tally.rows["bundle"] == Int64(tally.bundles))
            #expect(tally.unreadableBlocks == 0)
            try await expectSameAnswers(source.store, target.store, incident: incident)
            #expect(try target.counts() == source.counts(), "\(engine)")
            #expect(try await target.store.tokens() == source.store.tokens())
            #expect(try await target.store.verifyToken(reader.text)?.label == "ops")
            #expect(try target.store.check().isConsistent)
            var left: [String] = [], right: [String] = []
            try source.store.export(ExportFilter()) { left.append($0.body) }
            try target.store.export(ExportFilter()) { right.append($0.body) }
            #expect(left == right)
            // A store holding data is never a copy's target.
            #expect { try StoreCopy.run(from: from.store, to: target.store) } throws: { ($0 as? StoreError)?.code == .copyTargetNotEmpty }
            from = target
        }
        // The pruned bundle, sent again to the last copy, is still a duplicate; new uploads are stored there.
        #expect(try from.ingest(oldLines).duplicate)
        #expect(try !from.ingest([Lines.manifest()] + Lines.sent("after-copy")).duplicate)
    }

    /// Every why, search, weekly report (W45, W46), the alerts at +30/+60/+90 min of `incident` and the cause
    /// counts: the same JSON from both stores.
    private func expectSameAnswers(_ sqlite: any TraceStore, _ postgres: any TraceStore, incident: Int64) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let apps = try await sqlite.appIDs()
        #expect(try await postgres.appIDs() == apps)
        #expect(apps.count == 3)
        var compared = 0
        for app in apps {
            let notifications = try await sqlite.search(SearchQuery(appID: app, limit: 100_000))
            #expect(try await postgres.search(SearchQuery(appID: app, limit: 100_000)) == notifications)
            for summary in notifications {
                let left = try await sqlite.why(appID: app, notificationID: summary.notificationID).jsonValue.jsonText()
                let right = try await postgres.why(appID: app, notificationID: summary.notificationID).jsonValue.jsonText()
                #expect(left == right, "why \(summary.notificationID)")
                compared += 1
            }
            for week in ["2026-W45", "2026-W46"] {
                let period = try #require(ReportPeriod(isoWeek: week))
                let left = try await encoder.encode(sqlite.report(appID: app, period: period))
                let right = try await encoder.encode(postgres.report(appID: app, period: period))
                #expect(left == right, "report \(app) \(week)")
            }
        }
        #expect(compared > 300)
        for minutes in [30, 60, 90] {
            let now = incident + Int64(minutes) * 60_000
            let left = try await encoder.encode(sqlite.alerts(AlertRule.builtIn, now: now))
            let right = try await encoder.encode(postgres.alerts(AlertRule.builtIn, now: now))
            #expect(left == right, "alerts at +\(minutes) min")
        }
        #expect(
            try await sqlite.causeCounts(since: 0).sorted { "\($0)" < "\($1)" }
                == postgres.causeCounts(since: 0).sorted { "\($0)" < "\($1)" })
    }
}
