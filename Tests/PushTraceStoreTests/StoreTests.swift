import Foundation
import GRDB
import PushTraceCore
import PushTraceGzip
import PushTraceSimulator
@testable import PushTraceStore
import PushTraceTestSupport
import Testing

@Suite("Store: ingest, correlation, idempotency")
struct StoreTests {
    @Test("every simulated notification gets the cause it was written to produce")
    func simulatedCauses() throws {
        let temporary = try TemporaryStore()
        let bundles = temporary.directory.appendingPathComponent("bundles")
        let summary = try Simulator.run(SimulationOptions(seed: 7, notifications: 400), into: bundles)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        var stored = 0
        try FileIngestor(store: temporary.store).ingest(paths: files) { path, outcome in
            guard case .stored(let result) = outcome else { Issue.record("\(path): \(outcome)"); return }
            #expect(result.rejected == 0)
            stored += result.accepted
        }
        #expect(stored == summary.records)
        var progress: [Int] = []
        let settled = try temporary.store.settleCauses(batchSize: 150) { done, total in
            #expect(total == 400)
            progress.append(done)
        }
        #expect(settled == 400)
        // Progress starts before the first batch is diagnosed, then follows each batch.
        #expect(progress == [0, 150, 300, 400])
        let expected = try #require(summary.expected)
        #expect(Set(expected.map(\.cause)) == Set(Cause.allCases).subtracting([.unknownNotification]))
        for expectation in expected {
            let why = try temporary.store.why(appID: expectation.appID, notificationID: expectation.notificationID)
            #expect(why.diagnosis.cause == expectation.cause, "\(expectation.notificationID)")
        }
        let timeouts = try temporary.store.search(SearchQuery(cause: .serviceTimeout, limit: 1000))
        #expect(timeouts.count == expected.filter { $0.cause == .serviceTimeout }.count)
    }

    @Test("a simulated incident is diagnosed as written and fires service_timeout_spike only while it lasts")
    func simulatedIncident() throws {
        let temporary = try TemporaryStore()
        let bundles = temporary.directory.appendingPathComponent("bundles")
        let start: Int64 = 1_794_679_200_000 // 2026-11-14 18:00 UTC
        let summary = try Simulator.run(SimulationOptions(seed: 9, notifications: 300, incident: SimulatedIncident(start: start)),
                                        into: bundles)
        #expect(summary.notifications == 600)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        try FileIngestor(store: temporary.store).ingest(paths: files) { path, outcome in
            guard case .stored(let result) = outcome, result.rejected == 0 else { Issue.record("\(path): \(outcome)"); return }
        }
        #expect(try temporary.store.settleCauses() == 600)
        let expected = try #require(summary.expected)
        let incident = expected.suffix(300)
        #expect(incident.allSatisfy { $0.appID == SimulatedIncident.appID })
        // About 40% of the campaign times out (120 expected; the bounds allow for the draw).
        #expect((90...150).contains(incident.filter { $0.cause == .serviceTimeout }.count))
        for expectation in expected {
            let why = try temporary.store.why(appID: expectation.appID, notificationID: expectation.notificationID)
            #expect(why.diagnosis.cause == expectation.cause, "\(expectation.notificationID)")
        }
        let during = try temporary.store.alerts(AlertRule.builtIn, now: start + 30 * 60_000)
        #expect(during.firing.map(\.rule) == ["service_timeout_spike"])
        #expect(during.firing.first?.appID == SimulatedIncident.appID)
        #expect(during.firing.first?.category == SimulatedIncident.category)
        // A day earlier the same traffic has no window worth judging, let alone a spike.
        #expect(try temporary.store.alerts(AlertRule.builtIn, now: start - 86_400_000).firing.isEmpty)
    }

    @Test("summaries merged in memory across a group commit equal those upserted bundle by bundle")
    func groupMergeMatchesBundleByBundle() throws {
        let grouped = try TemporaryStore(), single = try TemporaryStore()
        let bundles = grouped.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: 11, notifications: 300), into: bundles)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        // All the files in one group commit (the CLI's 2-second groups) …
        try FileIngestor(store: grouped.store, receivedAt: .fixed(Lines.t0)).ingest(paths: files) { _, _ in }
        // … and each file in its own transaction, in the same order.
        for file in files {
            try FileIngestor(store: single.store, receivedAt: .fixed(Lines.t0)).ingest(paths: [file]) { _, _ in }
        }
        for temporary in [grouped, single] { try temporary.store.settleCauses() }
        let expected = try single.store.summaryRows()
        #expect(expected.count > 300)
        #expect(try grouped.store.summaryRows() == expected)
    }

    @Test("the same bundle twice is a duplicate and changes no count")
    func duplicate() throws {
        let temporary = try TemporaryStore()
        let bundle = [Lines.manifest(bundle: "b-1")] + Lines.serviceSteps("n-1")
        let first = try temporary.ingest(bundle)
        let before = try temporary.counts()
        let second = try temporary.ingest(bundle)
        #expect(!first.duplicate && second.duplicate)
        #expect(second.accepted == first.accepted)
        #expect(try temporary.counts() == before)
    }

    @Test("one notification ID in two apps stays two notifications")
    func appsIsolated() throws {
        let temporary = try TemporaryStore()
        try temporary.ingest([Lines.manifest(app: "app.one", device: "server")] + Lines.sent("shared-id"))
        try temporary.ingest([Lines.manifest(app: "app.two")] + Lines.serviceSteps("shared-id", expired: true))
        #expect(try temporary.store.apps(forNotification: "shared-id") == ["app.one", "app.two"])
        #expect(try temporary.store.why(appID: "app.one", notificationID: "shared-id").timeline.count == 2)
        #expect(try temporary.store.why(appID: "app.two", notificationID: "shared-id").diagnosis.cause == .serviceTimeout)
    }

    @Test("an uppercase device ID and a lowercase push.sent ID are one notification")
    func caseInsensitiveUUIDs() throws {
        let temporary = try TemporaryStore()
        let id = "6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10"
        try temporary.ingest([Lines.manifest(device: "server")] + Lines.sent(id.lowercased()))
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps(id))
        #expect(try temporary.counts()["notification"] == 1)
        let why = try temporary.store.why(appID: "net.rorklab.dailypick", notificationID: id)
        #expect(why.timeline.map(\.record.event) == ["push.sent", "push.apns_response", "service.received", "service.delivered"])
    }

    @Test("a device clock an hour ahead is corrected, the raw time kept, and steps follow push.sent")
    func clockCorrection() throws {
        let temporary = try TemporaryStore()
        let hour: Int64 = 3_600_000
        let receivedAt = Lines.t0 + 60_000
        try temporary.ingest([Lines.manifest(device: "server")] + Lines.sent("n-1"))
        let result = try temporary.ingest([Lines.manifest(uploadedAt: receivedAt + hour)]
                                          + Lines.serviceSteps("n-1", at: Lines.t0 + 800 + hour), receivedAt: receivedAt)
        #expect(result.clockOffsetMs == -hour)
        let why = try temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "n-1")
        let received = try #require(why.timeline.first { $0.record.event == "service.received" })
        #expect(received.ts == Lines.t0 + 800)
        #expect(received.deviceTs == Lines.t0 + 800 + hour)
        #expect(why.timeline.first?.record.event == "push.sent")
    }

    @Test("a bundle refused as a whole changes nothing")
    func wholeBundleFailure() throws {
        let temporary = try TemporaryStore()
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-0"))
        let before = try temporary.counts()
        let body = Deflater.gzip(Array(([Lines.manifest()] + Lines.serviceSteps("n-1")).joined(separator: "\n").utf8))
        #expect(throws: BundleError.self) { try temporary.ingest(Array(body.dropLast(5))) }
        #expect(try temporary.counts() == before)
    }

    @Test("durability full commits with synchronous FULL, normal with NORMAL, on the writer that commits")
    func durability() throws {
        let temporary = try TemporaryStore()
        for (durability, expected) in [(Store.Durability.full, 2), (.normal, 1)] {
            let store = try Store(path: temporary.directory.path + "/\(durability).sqlite", durability: durability)
            #expect(try store.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == expected)
            try store.close()
        }
    }

    @Test("a disk that fills up mid-bundle undoes that bundle, keeps what was committed, and is said in plain words")
    func diskFull() throws {
        let temporary = try TemporaryStore()
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-0"))
        let before = try temporary.counts()
        // The writer may not grow the file past the pages it has: SQLite then fails as it does on a full disk.
        try temporary.store.pool.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        let bundle = [Lines.manifest()] + (1...500).flatMap { Lines.serviceSteps("n-\($0)") }
        let error = try #require(throws: DatabaseError.self) { try temporary.ingest(bundle) }
        #expect(error.resultCode == .SQLITE_FULL)
        let explained = StoreError.explaining(error, path: temporary.path)
        #expect(explained as? StoreError == .diskFull(temporary.path))
        #expect("\(explained)".hasPrefix("the disk is full (\(temporary.path)'s, or that of SQLite's temporary directory"))
        #expect("\(explained)".hasSuffix("the transaction that needed the room was undone; what was committed before it stays"))
        #expect(try temporary.counts() == before)
    }

    @Test("a bad line is rejected alone, kept raw with its reason, and the rest is stored")
    func badLineAlone() throws {
        let temporary = try TemporaryStore()
        let bad = #"{"type":"event","ts":1763622001,"process":"service","event":"service.received","notification_id":"n-1"}"#
        let result = try temporary.ingest([Lines.manifest(), bad] + Lines.serviceSteps("n-1"))
        #expect(result.accepted == 3 && result.rejected == 1)
        #expect(result.rejections.first?.line == 2)
        let (reason, raw) = try temporary.store.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT reason, raw FROM rejected_line"))
            return (row["reason"] as String, row["raw"] as Data)
        }
        #expect(reason.contains("looks like seconds"))
        #expect(String(decoding: raw, as: UTF8.self) == bad)
    }

    @Test("a push awaits the device's logs, then is not delivered once the device uploads 30 minutes later")
    func awaitingThenNotDelivered() throws {
        let temporary = try TemporaryStore()
        try temporary.ingest([Lines.manifest(device: "server")] + Lines.sent("n-1", device: "d-9"))
        try temporary.store.settleCauses()
        #expect(try temporary.store.search(SearchQuery(cause: .awaitingDeviceLogs)).map(\.notificationID) == ["n-1"])
        let later = Lines.t0 + 45 * 60_000
        try temporary.ingest([Lines.manifest(device: "d-9")] + Lines.serviceSteps("n-2", at: later))
        #expect(try temporary.store.settleCauses() == 2)
        #expect(try temporary.store.search(SearchQuery(cause: .notDelivered)).map(\.notificationID) == ["n-1"])
    }

    @Test("the logs of one notification, from every process, in time order")
    func logs() throws {
        let temporary = try TemporaryStore()
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        let logs = try temporary.store.logs(appID: "net.rorklab.dailypick", notificationID: "n-1")
        #expect(logs.map(\.record.message) == ["downloading"])
    }

    @Test("not a database, another program's database, a folder, a missing folder, a newer pushtrace's file: refused clearly")
    func refusedDatabaseFiles() throws {
        let temporary = try TemporaryStore()
        let folder = temporary.directory.path
        let text = folder + "/bundle.ndjson"
        try Data("{\"type\":\"manifest\"}\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: StoreError.notADatabase(text)) { try Store(path: text) }
        #expect(throws: StoreError.notADatabase(text)) { try Store.openReadOnly(path: text) }
        #expect(throws: StoreError.cannotOpen(folder, reason: "it is a folder")) { try Store(path: folder) }
        let nowhere = folder + "/missing/p.sqlite"
        #expect(throws: StoreError.cannotOpen(nowhere, reason: "the folder \(folder)/missing does not exist")) {
            try Store(path: nowhere)
        }

        let other = folder + "/other.sqlite"
        try DatabaseQueue(path: other).write { try $0.execute(sql: "CREATE TABLE photo (id INTEGER PRIMARY KEY)") }
        #expect(throws: StoreError.otherDatabase(other, tables: ["photo"])) { try Store(path: other) }
        #expect(try DatabaseQueue(path: other).read { try $0.tableExists("bundle") } == false)

        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        try temporary.store.pool.write { try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99-from-the-future')") }
        let before = try temporary.counts()
        #expect(throws: StoreError.newerSchema(temporary.path, migrations: ["v99-from-the-future"])) {
            try Store(path: temporary.path)
        }
        #expect(try temporary.counts() == before)
    }

    @Test("a database another process keeps locked past the busy timeout is refused as locked, not as an SQLite code")
    func lockedDatabase() throws {
        let temporary = try TemporaryStore()
        let path = temporary.directory.path + "/locked.sqlite"
        try Store(path: path).close() // Closed, the log is empty: opening it again writes, so it needs the lock.
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: path, configuration: configuration)
        try holder.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        defer { try? holder.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") } }
        #expect(throws: StoreError.locked(path)) { try Store(path: path, busyTimeout: 0.2) }
    }
}
