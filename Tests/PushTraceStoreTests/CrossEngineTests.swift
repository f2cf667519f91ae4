import Foundation
import PushTraceCore
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

/// The same bundles stored on every engine give the same answers, byte for byte (SPEC §9).
@Suite("Every engine answers alike")
struct CrossEngineTests {
    @Test("make demo's corpus on SQLite and on PostgreSQL: every why, the weekly report of each app, and the alerts in the campaign's hour are the same JSON",
          .enabled(if: TestEngine.all.contains(.postgres)))
    func demoCorpusAnswersAlike() throws {
        let incident = try #require(InstantText.parse("2026-11-14T18:00:00Z"))
        let options = SimulationOptions(seed: 42, notifications: 600, incident: SimulatedIncident(start: incident))
        let stores = try [TestEngine.sqlite, .postgres].map { engine in
            let temporary = try TemporaryStore(engine: engine)
            let bundles = temporary.directory.appendingPathComponent("bundles")
            _ = try Simulator.run(options, into: bundles)
            try temporary.ingestFiles(in: bundles)
            return temporary
        }
        let (sqlite, postgres) = (stores[0].store, stores[1].store)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let apps = try sqlite.appIDs()
        #expect(try postgres.appIDs() == apps)
        #expect(apps.count == 3)
        var compared = 0
        for app in apps {
            let notifications = try sqlite.search(SearchQuery(appID: app, limit: 100_000))
            #expect(try postgres.search(SearchQuery(appID: app, limit: 100_000)) == notifications)
            for summary in notifications {
                let left = try sqlite.why(appID: app, notificationID: summary.notificationID).jsonValue.jsonText()
                let right = try postgres.why(appID: app, notificationID: summary.notificationID).jsonValue.jsonText()
                #expect(left == right, "why \(summary.notificationID)")
                compared += 1
            }
            for week in ["2026-W45", "2026-W46"] {
                let period = try #require(ReportPeriod(isoWeek: week))
                let left = try encoder.encode(sqlite.report(appID: app, period: period))
                let right = try encoder.encode(postgres.report(appID: app, period: period))
                #expect(left == right, "report \(app) \(week)")
            }
        }
        #expect(compared > 600)
        for minutes in [30, 60, 90] {
            let now = incident + Int64(minutes) * 60_000
            let left = try encoder.encode(sqlite.alerts(AlertRule.builtIn, now: now))
            let right = try encoder.encode(postgres.alerts(AlertRule.builtIn, now: now))
            #expect(left == right, "alerts at +\(minutes) min")
            #expect(try !sqlite.alerts(AlertRule.builtIn, now: now).firing.isEmpty || minutes != 60)
        }
        #expect(try sqlite.causeCounts(since: 0).sorted { "\($0)" < "\($1)" } == postgres.causeCounts(since: 0).sorted { "\($0)" < "\($1)" })
        #expect(try postgres.check().isConsistent)
    }
}
