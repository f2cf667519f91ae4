import Foundation
import Testing

@testable import PushTraceStore

@Suite("The decode-to-store queue")
struct BoundedQueueTests {
    @Test("elements come out in order, and closing releases a producer blocked on a full queue")
    func orderAndClose() {
        let queue = BoundedQueue<Int>(capacity: 2)
        let finished = DispatchSemaphore(value: 0)
        let producer = Thread {
            for i in 0..<100 { queue.push(i) }  // Blocks at 2 until popped, or until closed.
            finished.signal()
        }
        producer.start()
        #expect(queue.pop() == 0)
        #expect(queue.pop() == 1)
        #expect(!queue.isClosed)
        queue.close()
        #expect(queue.isClosed)
        #expect(finished.wait(timeout: .now() + 10) == .success)
    }

    @Test("a popped element is released at once, so the queue never keeps more than its capacity alive")
    func releasesPopped() {
        final class Payload: Sendable {}
        let queue = BoundedQueue<Payload>(capacity: 4)
        weak var first: Payload?
        weak var second: Payload?
        do {
            let one = Payload(), two = Payload()
            first = one
            second = two
            queue.push(one)
            queue.push(two)
        }
        _ = queue.pop()
        #expect(first == nil)
        #expect(second != nil)
        _ = queue.pop()
        #expect(second == nil)
    }
}
