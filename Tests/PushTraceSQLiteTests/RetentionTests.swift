import Foundation
import GRDB
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

@Suite("SQLiteStore: retention")
struct RetentionTests {
    @Test(
        "deleting what is older than a cut-off: records by bundle, old summaries, superseded configs; report figures unchanged, recent whys unchanged, a pruned bundle still a duplicate"
    )
    func retention() async throws {
        let temporary = try ReportTests.simulatedStore(seed: 11, notifications: 3_000)
        let store = temporary.sqlite
        let (first, last) = try await store.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT min(received_at), max(received_at) FROM bundle"))
            return (row[0] as Int64, row[1] as Int64)
        }
        let cutoff = (first + last) / 2
        let reportBefore = try await ReportTests.reportJSON(store)
        let previousWeek = ReportTests.week.previous
        let previousBefore = try await ReportTests.reportJSON(store, period: previousWeek)
        let (expected, recent) = try await store.pool.read { db in
            let expected = try Int.fetchOne(db, sql: "SELECT sum(accepted) FROM bundle WHERE received_at < ?", arguments: [cutoff]) ?? 0
            let recent = try #require(
                try String.fetchOne(
                    db,
                    sql: """
                        SELECT notification_id FROM notification WHERE app_id = ? AND first_ts > ? ORDER BY first_ts LIMIT 1
                        """, arguments: [ReportTests.app, cutoff + 86_400_000]))
            return (expected, recent)
        }
        let whyBefore = try await store.why(appID: ReportTests.app, notificationID: recent).jsonValue
        let configKeys = "SELECT count(DISTINCT app_id || ' ' || device_id || ' ' || process) FROM config"
        let configKeysBefore = try await store.pool.read { try Int.fetchOne($0, sql: configKeys) }
        let configKey = "app_id || ' ' || device_id || ' ' || process || ' ' || ts"
        let superseded = """
            SELECT key FROM (SELECT \(configKey) AS key, ts, row_number() OVER (PARTITION BY app_id, device_id, process
                                                                               ORDER BY ts DESC) AS newer FROM config)
            WHERE newer > 1 AND ts < ? ORDER BY key
            """
        let allConfigs = "SELECT \(configKey) AS key FROM config ORDER BY key"
        let (supersededBefore, configsBefore) = try await store.pool.read { db in
            (try String.fetchAll(db, sql: superseded, arguments: [cutoff]), try String.fetchAll(db, sql: allConfigs))
        }
        let actionsKept = try await store.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT notification_id || action_list FROM notification WHERE action_list IS NOT NULL
                    AND NOT (first_ts < ? AND last_ts < ? AND cause IS NOT NULL) ORDER BY notification_id
                    """, arguments: [cutoff, cutoff])
        }
        let actionsBefore =
            try await store.pool.read {
                try Int.fetchOne($0, sql: "SELECT count(*) FROM notification WHERE action_list IS NOT NULL")
            } ?? 0
        #expect(actionsKept.count > 0 && actionsKept.count < actionsBefore)  // some go, some stay
        var calls = 0
        // Small batches: the config pass reads pages of 500 index entries, so a key's rows span pages.
        let report = try store.deleteExpired(before: cutoff, batchSize: 50) { _ in
            calls += 1
            return true
        }
        #expect(report.records == expected && expected > 0)
        #expect(report.configs == supersededBefore.count && configsBefore.count > 1_000 && supersededBefore.count > 500)
        #expect(report.notifications > 0 && report.bundles > 0)
        #expect(calls > 2)  // small transactions, not one
        try await store.pool.read { db throws in
            #expect(
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM record_block r JOIN bundle b ON b.id = r.bundle_ref WHERE b.received_at < ?
                        """, arguments: [cutoff]) == 0)
            // The index keeps no entry of a deleted block.
            #expect(
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM notification_block WHERE block NOT IN (SELECT id FROM record_block)
                        """) == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM notification WHERE last_ts < ?", arguments: [cutoff]) == 0)
            // The deleted summaries' actions went with them; the others' stayed.
            #expect(
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT notification_id || action_list FROM notification WHERE action_list IS NOT NULL ORDER BY notification_id
                        """) == actionsKept)
            #expect(try Int.fetchOne(db, sql: "SELECT sum(lines) FROM record_block") ?? 0 > 0)
            // Every app, device and process keeps its latest config: it is still in force. Exactly the superseded
            // ones before the cut-off are gone.
            #expect(try Int.fetchOne(db, sql: configKeys) == configKeysBefore)
            #expect(try Int64.fetchAll(db, sql: superseded, arguments: [cutoff]).isEmpty)
            #expect(try String.fetchAll(db, sql: allConfigs) == configsBefore.filter { !supersededBefore.contains($0) })
            // Bodies no config refers to are gone; every config's body is there.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM config_body WHERE id NOT IN (SELECT body_ref FROM config)") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM config WHERE body_ref NOT IN (SELECT id FROM config_body)") == 0)
        }
        // Reports read the rollups, which stay whole; a recent notification's answer is the same.
        #expect(try await ReportTests.reportJSON(store) == reportBefore)
        // Every figure is the same; only the examples of deleted notifications are gone (nothing to run `why` on).
        func figures(_ json: Data) throws -> NSDictionary {
            var object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            object["cause_examples"] = nil
            if var previous = object["previous"] as? [String: Any] {
                previous["cause_examples"] = nil
                object["previous"] = previous
            }
            return NSDictionary(dictionary: object)
        }
        #expect(try await figures(ReportTests.reportJSON(store, period: previousWeek)) == figures(previousBefore))
        #expect(try await store.why(appID: ReportTests.app, notificationID: recent).jsonValue == whyBefore)
        // A second pass finds nothing; a pruned bundle uploaded again is still a duplicate.
        #expect(try store.deleteExpired(before: cutoff).records == 0)
        let files = try TemporaryStore.bundleFiles(in: temporary.directory.appendingPathComponent("bundles"))
        let oldest = try #require(
            files.min {
                (try? FileManager.default.attributesOfItem(atPath: $0)[.modificationDate] as? Date ?? .distantFuture) ?? .distantFuture
                    < (try? FileManager.default.attributesOfItem(atPath: $1)[.modificationDate] as? Date ?? .distantFuture)
                    ?? .distantFuture
            })
        var outcome: FileIngestor.Outcome?
        try FileIngestor(store: store).ingest(paths: [oldest]) { _, result in outcome = result }
        guard case .stored(let result) = outcome else {
            Issue.record("\(String(describing: outcome))")
            return
        }
        #expect(result.duplicate)
    }
}
