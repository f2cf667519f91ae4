import Testing

@testable import PushTraceServer

@Suite("The writer's queue: round robin between tokens, batches bounded by count and cost")
struct FairQueueTests {
    @Test("a burst of one owner waits behind itself: each batch takes every owner's next item in turn")
    func roundRobin() {
        var queue = FairQueue<String>()
        for n in 0..<6 { queue.append("a\(n)", owner: "A") }
        queue.append("b0", owner: "B")
        queue.append("b1", owner: "B")
        queue.append("c0", owner: "C")
        #expect(queue.count == 9 && queue.count(of: "A") == 6)
        #expect(queue.next(maxCount: 4, maxCost: .max) { _ in 1 } == ["a0", "b0", "c0", "a1"])
        #expect(queue.next(maxCount: 4, maxCost: .max) { _ in 1 } == ["b1", "a2", "a3", "a4"])
        queue.append("c1", owner: "C")
        #expect(queue.next(maxCount: 4, maxCost: .max) { _ in 1 } == ["a5", "c1"])
        #expect(queue.isEmpty && queue.next(maxCount: 4, maxCost: .max) { _ in 1 }.isEmpty)
    }

    @Test("a costly item commits alone, and the cheap items of others are not batched behind it")
    func costBound() {
        var queue = FairQueue<(String, Int)>()
        queue.append(("huge", 400_000), owner: "A")
        queue.append(("small", 3), owner: "B")
        queue.append(("small2", 3), owner: "B")
        let cost = { (item: (String, Int)) in item.1 }
        #expect(queue.next(maxCount: 100, maxCost: 10_000, cost: cost).map(\.0) == ["huge"])
        #expect(queue.next(maxCount: 100, maxCost: 10_000, cost: cost).map(\.0) == ["small", "small2"])
        queue.append(("cheap", 5), owner: "B")
        queue.append(("big", 9_999), owner: "A")
        // The item that would pass the cost waits, first in line for the next batch.
        #expect(queue.next(maxCount: 100, maxCost: 10_000, cost: cost).map(\.0) == ["cheap"])
        #expect(queue.next(maxCount: 100, maxCost: 10_000, cost: cost).map(\.0) == ["big"])
        #expect(queue.isEmpty)
    }
}
