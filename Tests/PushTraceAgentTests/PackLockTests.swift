import Foundation
import Testing

@testable import PushTraceAgent

@Suite("Agent: the pack lock when the app's background time runs out")
struct PackLockTests {
    @Test(
        "suspended (the expiration handler), the lock is refused and packing stops between bundles; the wait ends within a second; the next upload packs the rest, nothing lost or twice"
    )
    func suspendedMidPack() async throws {
        let temporary = try TemporaryContainer()
        let service = try Recorder(process: .service, container: temporary.container)
        let count = 600
        for index in 0..<count { service.service.received("n-\(index)") }
        var configuration = UploaderConfiguration(
            server: URL(string: "http://127.0.0.1:9")!, token: "pt_test", appID: "net.rorklab.dailypick")
        configuration.maxBundleBytes = 256
        let uploader = try Uploader(configuration: configuration, container: temporary.container)
        let bundles: @Sendable () -> Int = { temporary.files("outbox").filter { $0.hasSuffix(".gz") }.count }
        let holders = PackLockHolders.of(temporary.container)

        let pass = Task(executorPreference: OwnQueueExecutor()) { await uploader.upload() }
        let waited = Shared<TimeInterval>(99), free = Shared(false)
        let ran = await onOwnThread(when: { bundles() >= 2 }) {
            let suspending = Date()
            free.value = holders.suspend(waitingUpTo: 1)
            waited.value = Date().timeIntervalSince(suspending)
        }
        try #require(ran, "no bundle was written")
        #expect(free.value, "the lock was still held after a second")
        #expect(waited.value < 1)
        #expect(PackLock(container: temporary.container).ifFree { true } == nil, "taken while suspended")
        _ = await pass.value
        let packedBefore = bundles()

        let next = await uploader.upload()  // an upload call lets packing go on
        #expect(!holders.isSuspended)
        #expect(next.packed > 0, "the pass was not cut short")
        #expect(bundles() == packedBefore + next.packed)
        var ids: [String] = []
        for name in temporary.files("outbox") where name.hasSuffix(".gz") {
            let data = try Data(contentsOf: temporary.root.appendingPathComponent("outbox").appendingPathComponent(name))
            ids += try TemporaryContainer.parse(TemporaryContainer.gunzip(data), file: name)
                .filter { $0["event"] as? String == "service.received" }.compactMap { $0["notification_id"] as? String }
        }
        #expect(ids.count == count && Set(ids).count == count)
    }
}
