import Foundation
@testable import PushTraceServer
import Testing

@Suite("The gate that bounds large bundles in memory")
struct LargeBundleGateTests {
    @Test("with every slot held, the next large bundle waits until one is given back")
    func waitsForASlot() async throws {
        let gate = LargeBundleGate(slots: 1)
        let entered = Flag()
        await gate.enter()
        let waiter = Task {
            await gate.enter()
            entered.set()
            gate.leave()
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!entered.isSet)
        gate.leave()
        await waiter.value
        #expect(entered.isSet)
        // The slot came back: it can be taken again at once.
        await gate.enter()
        gate.leave()
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
