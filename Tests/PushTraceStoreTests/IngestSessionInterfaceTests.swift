import Foundation
import PushTraceCore
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
    func groupCommit(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        let session = try temporary.store.makeIngestSession(deferringSummaries: false)
        let results = try session.inGroupCommit { group in
            try (1...3).map { n -> Result<IngestResult, BundleError> in
                let lines = n == 2 ? Lines.serviceSteps("n-2") : [Lines.manifest()] + Lines.serviceSteps("n-\(n)")
                do { return .success(try group.ingest(source: "t", receivedAt: Lines.t0, Self.bundle(lines))) } catch let error as BundleError {
                    return .failure(error)
                }
            }
        }
        #expect(results.map { (try? $0.get())?.accepted } == [3, nil, 3])
        #expect(try temporary.store.search(SearchQuery()).map(\.notificationID).sorted() == ["n-1", "n-3"])
    }

    @Test("deferred summaries: the bundles are stored at once, their summaries once written; nothing is lost",
          arguments: TestEngine.all)
    func deferredSummaries(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        let session = try temporary.store.makeIngestSession(deferringSummaries: true)
        #expect(session.defersSummaries)
        for (n, at) in [(1, Lines.t0), (1, Lines.t0 + 5_000), (2, Lines.t0)] {
            _ = try session.inGroupCommit { group in
                try group.ingest(source: "t", receivedAt: Lines.t0 + 60_000,
                                 Self.bundle([Lines.manifest()] + Lines.serviceSteps("n-\(n)", at: at)))
            }
        }
        #expect(session.hasPendingSummaries)
        #expect(session.summariesDue(after: .zero, notifications: 1_000))
        try session.writeSummaries()
        #expect(!session.hasPendingSummaries)
        let summaries = try temporary.store.search(SearchQuery())
        #expect(summaries.map(\.records).sorted() == [3, 6])
        #expect(try temporary.store.check().isConsistent)
    }
}
