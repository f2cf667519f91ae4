import Foundation
import PushTraceCore
import PushTraceRecords
import PushTraceStore
import PushTraceTestSupport
import Testing

@Suite("Every engine: the writer's session")
struct IngestSessionInterfaceTests {
    static func bundle(_ lines: [String]) -> (_ sink: (BundleItem) throws -> Void) throws -> Void {
        { sink in
            let decoder = BundleDecoder(encoding: .sniff)
            let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
            try bytes.withUnsafeBytes { try decoder.consume($0, sink) }
            try decoder.finish(sink)
        }
    }

    @Test("a group stores its bundles at one commit; a bundle the decoder refuses fails alone", arguments: TestEngine.all)
    func groupCommit(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let session = try temporary.store.makeIngestSession(deferringSummaries: false)
        let results = try session.inGroupCommit { group in
            try (1...3).map { n -> Result<IngestResult, BundleError> in
                let lines = n == 2 ? Lines.serviceSteps("n-2") : [Lines.manifest()] + Lines.serviceSteps("n-\(n)")
                do { return .success(try group.ingest(source: "t", receivedAt: Lines.t0, Self.bundle(lines))) } catch let error
                    as BundleError
                {
                    return .failure(error)
                }
            }
        }
        #expect(results.map { (try? $0.get())?.accepted } == [3, nil, 3])
        #expect(try await temporary.store.search(SearchQuery()).map(\.notificationID).sorted() == ["n-1", "n-3"])
        // The refused bundle failed before its manifest: the lines of the bundle before it are kept all the same.
        let check = try temporary.store.check()
        #expect(check.isConsistent && check.records == 6, "\(check)")
    }

    @Test(
        "a bundle whose blocks run to megabytes is stored whole, and answers as a duplicate when sent again",
        arguments: TestEngine.all)
    func largeBundle(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        // Hex digits of random bytes: deflate keeps about half of them, so 120 lines of 128 KiB are blocks of some
        // 8 MB, over the size at which a writer stores a bundle's own blocks before its end. One line's noise serves
        // every line: each is longer than deflate's window, so a repeat is not found.
        var random = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var noise = [UInt8]()
        noise.reserveCapacity(128 << 10)
        for _ in 0..<(16 << 10) {
            var word = random.next()
            for _ in 0..<8 {
                noise.append(digits[Int(word & 0xf)])
                word >>= 4
            }
        }
        let message = String(decoding: noise, as: UTF8.self)
        let lines =
            [Lines.manifest()]
            + (0..<120).map { i in
                #"{"type":"log","ts":\#(Lines.t0 + Int64(i)),"process":"service","level":"info","message":"\#(message)","notification_id":"n-big"}"#
            }
        let session = try temporary.store.makeIngestSession(deferringSummaries: false)
        for duplicate in [false, true] {
            let result = try session.inGroupCommit { group in
                try group.ingest(source: "t", receivedAt: Lines.t0, Self.bundle(lines))
            }
            #expect(result.accepted == 120 && result.duplicate == duplicate)
        }
        let check = try temporary.store.check()
        #expect(check.isConsistent && check.records == 120, "\(check)")
    }

    @Test(
        "deferred summaries, where the engine grants them: the bundles are stored at once, their summaries once written; nothing is lost",
        arguments: TestEngine.all)
    func deferredSummaries(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let session = try temporary.store.makeIngestSession(deferringSummaries: true)
        // SQLite's one writer defers them; PostgreSQL's servers merge them as each group commits, and decline.
        #expect(session.defersSummaries == (engine == .sqlite))
        for (n, at) in [(1, Lines.t0), (1, Lines.t0 + 5_000), (2, Lines.t0)] {
            _ = try session.inGroupCommit { group in
                try group.ingest(
                    source: "t", receivedAt: Lines.t0 + 60_000,
                    Self.bundle([Lines.manifest()] + Lines.serviceSteps("n-\(n)", at: at)))
            }
        }
        #expect(session.hasPendingSummaries == session.defersSummaries)
        #expect(session.summariesDue(after: .zero, notifications: 1_000) == session.defersSummaries)
        try session.writeSummaries()
        #expect(!session.hasPendingSummaries)
        let summaries = try await temporary.store.search(SearchQuery())
        #expect(summaries.map(\.records).sorted() == [3, 6])
        #expect(try temporary.store.check().isConsistent)
    }

    @Test(
        "a bundle that fails after its config and manifest were stored leaves the next bundle of the group whole",
        arguments: TestEngine.all)
    func failedBundleInGroup(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let config =
            #"{"type":"config","ts":1763622000500,"process":"app","app_group":"group.x","categories":[{"id":"DAILY_PICK","actions":["SAVE"]}]}"#
        let manifest =
            #"{"type":"manifest","schema":1,"bundle_id":"BUNDLE","app_id":"app.one","device_id":"d-1","app_version":"9.9","os":"iOS 26.0","sdk":"pushtrace-swift/9"}"#
        struct Interrupted: Error {}
        let session = try temporary.store.makeIngestSession(deferringSummaries: false)
        let stored = try session.inGroupCommit { group -> IngestResult in
            // The first bundle stores its manifest and its config line, then its upload breaks off.
            #expect(throws: Interrupted.self) {
                try group.ingest(source: "t", receivedAt: Lines.t0) { sink in
                    try Self.bundle([manifest.replacingOccurrences(of: "BUNDLE", with: "b-1"), config])(sink)
                    throw Interrupted()
                }
            }
            // The same client and config again, in the same transaction: stored whole, on rows of its own.
            return try group.ingest(
                source: "t", receivedAt: Lines.t0,
                Self.bundle(
                    [manifest.replacingOccurrences(of: "BUNDLE", with: "b-2"), config]
                        + Lines.serviceSteps("n-1")))
        }
        #expect(stored.accepted == 4 && !stored.duplicate)
        #expect(try await temporary.store.latestConfiguration(appID: "app.one")?.registeredCategories == ["DAILY_PICK"])
        #expect(try temporary.store.check().isConsistent)
        var lines: [String] = []
        try temporary.store.export(ExportFilter(appID: "app.one")) { lines.append($0.body) }
        #expect(lines.first == config)
        #expect(try temporary.counts()["bundle"] == 1)
    }

    @Test(
        "a bundle's rejected lines are stored together and only up to the bound; past it they are counted",
        arguments: TestEngine.all)
    func rejectedLinesAreBounded(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let bad = (0..<5_000).map { "x\($0)" }
        let result = try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1") + bad)
        #expect(result.accepted == 3 && result.rejected == 5_000)
        #expect(result.rejections.count == IngestResult.listedRejections)
        let counts = try temporary.counts()
        #expect(counts["rejected_line"] == RejectedLineBatch.lineLimit)
        var first: [QueryValue] = []
        try temporary.store.readOnlyQuery(
            "SELECT line, reason FROM rejected_line ORDER BY line LIMIT 1", columns: { _ in }, row: { first = $0 })
        #expect(first.first == .integer(5))
        #expect(try await temporary.store.search(SearchQuery()).map(\.notificationID) == ["n-1"])
    }

    /// SQLite only: two thousand bundles on PostgreSQL take long enough to starve the suite's live-server tests;
    /// `make attack-test` reads 8,000 blocks through a server on each engine.
    @Test(
        "a notification named by more blocks than a why reads: the first ones are read, and the answer says where it was cut",
        arguments: [TestEngine.sqlite])
    func whyReadsABoundedTimeline(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let session = try temporary.store.makeIngestSession(deferringSummaries: false)
        let blocks = StoredLineReader.blockLimit + 5
        _ = try session.inGroupCommit { group in
            for n in 0..<blocks {
                let line =
                    #"{"type":"log","ts":\#(Lines.t0 + Int64(n)),"process":"service","level":"info","message":"m","notification_id":"n-1"}"#
                _ = try group.ingest(source: "t", receivedAt: Lines.t0, Self.bundle([Lines.manifest(), line]))
            }
        }
        let why = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "n-1")
        let cut = try #require(why.timelineCut)
        #expect(cut.blocksRead == StoredLineReader.blockLimit)
        #expect(cut.through == Lines.t0 + Int64(StoredLineReader.blockLimit - 1))
        guard case .object(let json) = why.jsonValue, case .object(let marked)? = json["timeline_cut"] else {
            Issue.record("no timeline_cut in \(why.jsonValue)")
            return
        }
        #expect(marked["blocks_read"] == .int(Int64(StoredLineReader.blockLimit)))
        #expect(why.text.contains("the timeline was cut"))
        // A notification within the limits is not marked.
        _ = try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-2"))
        #expect(try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "n-2").timelineCut == nil)
    }

    @Test(
        "the config in force is the latest of each process at or before the notification's first record, however many the device recorded",
        arguments: TestEngine.all)
    func configInForce(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        func config(at ts: Int64, category: String) -> String {
            #"{"type":"config","ts":\#(ts),"process":"app","app_group":"group.x","categories":[{"id":"\#(category)","actions":["A"]}]}"#
        }
        // Many config records before the one in force, and one after it.
        var device = [Lines.manifest()]
        device += (0..<200).map { config(at: Lines.t0 - 100_000 + Int64($0), category: "OTHER") }
        device += [config(at: Lines.t0 - 5_000, category: "DAILY_PICK"), config(at: Lines.t0 + 600_000, category: "OTHER")]
        device += Lines.serviceSteps("n-1") + Lines.serviceSteps("n-2", at: Lines.t0 + 700_000)
        _ = try temporary.ingest(device)
        let inForce = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "n-1")
        #expect(!inForce.diagnosis.findings.contains { $0.code == .categoryUnregistered }, "\(inForce.diagnosis.findings)")
        let later = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "n-2")
        #expect(later.diagnosis.findings.contains { $0.code == .categoryUnregistered }, "\(later.diagnosis.findings)")
    }

    @Test(
        "a config body is stored once: repeated in a bundle past a batch of look-ups, in later bundles and on other devices",
        arguments: TestEngine.all)
    func configBodiesStoredOnce(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        func config(_ process: String, group: String = "group.x") -> String {
            #"{"type":"config","ts":\#(Lines.t0),"process":"\#(process)","app_group":"\#(group)","categories":[{"id":"DAILY_PICK","actions":["A"]}]}"#
        }
        // Each process's record forty times in each bundle (more than wait for their bodies at once), two bundles
        // from each of two devices, each in a transaction of its own.
        for device in ["d-1", "d-2"] {
            for _ in 0..<2 {
                let repeated = (0..<40).flatMap { _ in ["app", "service", "content"].map { config($0) } }
                _ = try temporary.ingest([Lines.manifest(device: device)] + repeated)
            }
        }
        _ = try temporary.ingest([Lines.manifest(device: "d-3"), config("app", group: "group.y"), config("app")])
        let counts = try temporary.counts()
        #expect(counts["config_body"] == 4)
        // One row per device, process and time: (d-1, d-2) × 3, and d-3's app (its second record has the same time).
        #expect(counts["config"] == 7)
        #expect(try await temporary.store.latestConfiguration(appID: "net.rorklab.dailypick")?.registeredCategories == ["DAILY_PICK"])
    }
}
