import Foundation
import PushTraceCore
import PushTraceGzip
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

/// The store-interface suite: what every engine must answer alike. Each test runs once per engine
/// (``TestEngine/all``), through ``TraceStore`` only.
@Suite("Every engine: ingest, correlation, idempotency, causes")
struct StoreInterfaceTests {
    @Test("every simulated notification gets the cause it was written to produce", arguments: TestEngine.all)
    func simulatedCauses(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let bundles = temporary.directory.appendingPathComponent("bundles")
        let summary = try Simulator.run(SimulationOptions(seed: 7, notifications: 400), into: bundles)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        var stored = 0
        try FileIngestor(store: temporary.store).ingest(paths: files) { path, outcome in
            guard case .stored(let result) = outcome else {
                Issue.record("\(path): \(outcome)")
                return
            }
            #expect(result.rejected == 0)
            stored += result.accepted
        }
        #expect(stored == summary.records)
        var progress: [Int] = []
        // 400 of the everyday traffic, and 8 of the settings and delivery rules (one of each, two of them with the
        // later notification they rest on).
        #expect(summary.notifications == 408)
        let settled = try temporary.store.settleCauses(batchSize: 150) { done, total in
            #expect(total == 408)
            progress.append(done)
        }
        #expect(settled == 408)
        // Progress starts before the first batch is diagnosed, then follows each batch.
        #expect(progress == [0, 150, 300, 408])
        let expected = try #require(summary.expected)
        #expect(Set(expected.map(\.cause)) == Set(Cause.allCases).subtracting(Simulator.notSimulated))
        for expectation in expected {
            let why = try await temporary.store.why(appID: expectation.appID, notificationID: expectation.notificationID)
            #expect(why.diagnosis.cause == expectation.cause, "\(expectation.notificationID)")
        }
        let timeouts = try await temporary.store.search(SearchQuery(cause: .serviceTimeout, limit: 1000))
        #expect(timeouts.count == expected.filter { $0.cause == .serviceTimeout }.count)
    }

    @Test(
        "search pages, by cause and across apps, list what filtering every summary would, in the same order",
        arguments: TestEngine.all)
    func searchPagesMatchAFullFilter(engine: TestEngine) async throws {
        let temporary = try TemporaryStore.simulated(engine: engine, seed: 3, notifications: 900)
        let store = temporary.store
        let every = try await store.search(SearchQuery(limit: 100_000))
        let apps = Set(every.map(\.appID))
        #expect(apps.count == 3)
        let causes = Set(every.compactMap(\.cause)).compactMap(Cause.init(rawValue:))
        for app in [nil] + apps.sorted().map(Optional.some) {
            for cause in [nil] + causes {
                for category in [nil, "DAILY_PICK"] {
                    let expected = every.filter {
                        (app == nil || $0.appID == app) && (cause == nil || $0.cause == cause?.rawValue)
                            && (category == nil || $0.category == category)
                    }
                    for (offset, limit) in [(0, 7), (7, 7), (0, 50), (40, 25)] {
                        let page = try await store.search(
                            SearchQuery(appID: app, cause: cause, category: category, limit: limit, offset: offset))
                        #expect(
                            page == Array(expected.dropFirst(offset).prefix(limit)),
                            "app \(app ?? "any") cause \(cause?.rawValue ?? "any") category \(category ?? "any") at \(offset)")
                    }
                }
            }
        }
        // A span that ends before a cause's rows: nothing, and no walk through the app.
        let early = try await store.search(SearchQuery(appID: apps.first, cause: .serviceTimeout, until: 0))
        #expect(early.isEmpty)
    }

    @Test("a simulated incident is diagnosed as written and fires service_timeout_spike only while it lasts", arguments: TestEngine.all)
    func simulatedIncident(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let bundles = temporary.directory.appendingPathComponent("bundles")
        let start: Int64 = 1_794_679_200_000  // 2026-11-14 18:00 UTC
        let summary = try Simulator.run(
            SimulationOptions(seed: 9, notifications: 300, incident: SimulatedIncident(start: start)),
            into: bundles)
        // 300 of the everyday traffic, 8 of the settings and delivery rules, 300 of the campaign.
        #expect(summary.notifications == 608)
        let files = try FileManager.default.subpathsOfDirectory(atPath: bundles.path)
            .filter { $0.contains(".ndjson") }.sorted().map { bundles.appendingPathComponent($0).path }
        try FileIngestor(store: temporary.store).ingest(paths: files) { path, outcome in
            guard case .stored(let result) = outcome, result.rejected == 0 else {
                Issue.record("\(path): \(outcome)")
                return
            }
        }
        #expect(try temporary.store.settleCauses() == 608)
        let expected = try #require(summary.expected)
        let incident = expected.suffix(300)
        #expect(incident.allSatisfy { $0.appID == SimulatedIncident.appID })
        // About 40% of the campaign times out (120 expected; the bounds allow for the draw).
        #expect((90...150).contains(incident.filter { $0.cause == .serviceTimeout }.count))
        for expectation in expected {
            let why = try await temporary.store.why(appID: expectation.appID, notificationID: expectation.notificationID)
            #expect(why.diagnosis.cause == expectation.cause, "\(expectation.notificationID)")
        }
        let during = try await temporary.store.alerts(AlertRule.builtIn, now: start + 30 * 60_000)
        #expect(during.firing.map(\.rule) == ["service_timeout_spike"])
        #expect(during.firing.first?.appID == SimulatedIncident.appID)
        #expect(during.firing.first?.category == SimulatedIncident.category)
        // A day earlier the same traffic has no window worth judging, let alone a spike.
        #expect(try await temporary.store.alerts(AlertRule.builtIn, now: start - 86_400_000).firing.isEmpty)
    }

    @Test("the same bundle twice is a duplicate and changes no count", arguments: TestEngine.all)
    func duplicate(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        let bundle = [Lines.manifest(bundle: "b-1")] + Lines.serviceSteps("n-1")
        let first = try temporary.ingest(bundle)
        let before = try temporary.counts()
        let second = try temporary.ingest(bundle)
        #expect(!first.duplicate && second.duplicate)
        #expect(second.accepted == first.accepted)
        #expect(try temporary.counts() == before)
    }

    @Test("one notification ID in two apps stays two notifications", arguments: TestEngine.all)
    func appsIsolated(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest(app: "app.one", device: "server")] + Lines.sent("shared-id"))
        try temporary.ingest([Lines.manifest(app: "app.two")] + Lines.serviceSteps("shared-id", expired: true))
        #expect(try await temporary.store.apps(forNotification: "shared-id") == ["app.one", "app.two"])
        #expect(try await temporary.store.why(appID: "app.one", notificationID: "shared-id").timeline.count == 2)
        #expect(try await temporary.store.why(appID: "app.two", notificationID: "shared-id").diagnosis.cause == .serviceTimeout)
    }

    @Test("an uppercase device ID and a lowercase push.sent ID are one notification", arguments: TestEngine.all)
    func caseInsensitiveUUIDs(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let id = "6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10"
        try temporary.ingest([Lines.manifest(device: "server")] + Lines.sent(id.lowercased()))
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps(id))
        #expect(try temporary.counts()["notification"] == 1)
        let why = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: id)
        #expect(why.timeline.map(\.record.event) == ["push.sent", "push.apns_response", "service.received", "service.delivered"])
    }

    @Test("a device clock an hour ahead is corrected, the raw time kept, and steps follow push.sent", arguments: TestEngine.all)
    func clockCorrection(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let hour: Int64 = 3_600_000
        let receivedAt = Lines.t0 + 60_000
        try temporary.ingest([Lines.manifest(device: "server")] + Lines.sent("n-1"))
        let result = try temporary.ingest(
            [Lines.manifest(uploadedAt: receivedAt + hour)]
                + Lines.serviceSteps("n-1", at: Lines.t0 + 800 + hour), receivedAt: receivedAt)
        #expect(result.clockOffsetMs == -hour)
        let why = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "n-1")
        let received = try #require(why.timeline.first { $0.record.event == "service.received" })
        #expect(received.ts == Lines.t0 + 800)
        #expect(received.deviceTs == Lines.t0 + 800 + hour)
        #expect(why.timeline.first?.record.event == "push.sent")
    }

    @Test("a bundle refused as a whole changes nothing", arguments: TestEngine.all)
    func wholeBundleFailure(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-0"))
        let before = try temporary.counts()
        let body = Deflater.gzip(Array(([Lines.manifest()] + Lines.serviceSteps("n-1")).joined(separator: "\n").utf8))
        #expect(throws: BundleError.self) { try temporary.ingest(Array(body.dropLast(5))) }
        #expect(try temporary.counts() == before)
    }

    @Test("a push awaits the device's logs, then is not delivered once the device uploads 30 minutes later", arguments: TestEngine.all)
    func awaitingThenNotDelivered(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest(device: "server")] + Lines.sent("n-1", device: "d-9"))
        try temporary.store.settleCauses()
        #expect(try await temporary.store.search(SearchQuery(cause: .awaitingDeviceLogs)).map(\.notificationID) == ["n-1"])
        let later = Lines.t0 + 45 * 60_000
        try temporary.ingest([Lines.manifest(device: "d-9")] + Lines.serviceSteps("n-2", at: later))
        #expect(try temporary.store.settleCauses() == 2)
        #expect(try await temporary.store.search(SearchQuery(cause: .notDelivered)).map(\.notificationID) == ["n-1"])
    }

    @Test("the logs of one notification, from every process, in time order", arguments: TestEngine.all)
    func logs(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        let logs = try await temporary.store.logs(appID: "net.rorklab.dailypick", notificationID: "n-1")
        #expect(logs.map(\.record.message) == ["downloading"])
    }
}
