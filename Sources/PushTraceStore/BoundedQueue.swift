import Foundation

/// A blocking first-in first-out queue of bounded length between two threads: `push` waits while it is full,
/// `pop` waits while it is empty. It lets decoding (one core) run ahead of storing (the other) by a bounded amount.
/// Once the consumer closes it, `push` drops elements instead of waiting, so the producer can always finish.
package final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    // A ring: `count` elements from `head`. A popped slot is emptied at once, so the queue never holds more
    // than `capacity` elements alive.
    private var slots: [Element?]
    private var head = 0
    private var count = 0
    private let capacity: Int
    private var closed = false
    private var producerWaits = false
    private var consumerWaits = false

    package init(capacity: Int) {
        self.capacity = capacity
        slots = Array(repeating: nil, count: capacity)
    }

    package func push(_ element: Element) {
        condition.lock()
        defer { condition.unlock() }
        while count == capacity, !closed {
            producerWaits = true
            condition.wait()
        }
        if closed { return }
        slots[(head + count) % capacity] = element
        count += 1
        if consumerWaits {
            consumerWaits = false
            condition.broadcast()
        }
    }

    package func pop() -> Element {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 {
            consumerWaits = true
            condition.wait()
        }
        let element = slots[head].take()!
        head = (head + 1) % capacity
        count -= 1
        // A waiting producer is woken once the queue is half empty, not at every pop: each wake-up is a context
        // switch, and a producer woken for one slot would sleep again at once.
        if producerWaits, count <= capacity / 2 {
            producerWaits = false
            condition.broadcast()
        }
        return element
    }

    /// Whether the consumer has gone: a producer should stop.
    package var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// Called by the consumer when it will pop no more: releases a waiting producer and drops what is queued.
    package func close() {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        slots = Array(repeating: nil, count: capacity)
        head = 0
        count = 0
        condition.broadcast()
    }
}

extension BoundedQueue {
    /// Runs `produce` on a thread of its own, named `name`, that pushes into this queue. The consumer calls
    /// ``QueueProducer/stop()`` when it is done (in a `defer`): the thread may be using what the consumer is about
    /// to close.
    package func startProducer(
        named name: String, stackSize: Int, _ produce: @escaping @Sendable () -> Void
    ) -> QueueProducer<Element> {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            produce()
        }
        thread.name = name
        thread.stackSize = stackSize
        thread.start()
        return QueueProducer(queue: self, done: done)
    }
}

/// A thread pushing into a ``BoundedQueue``, as ``BoundedQueue/startProducer(named:stackSize:_:)`` started it.
package struct QueueProducer<Element: Sendable>: Sendable {
    fileprivate let queue: BoundedQueue<Element>
    fileprivate let done: DispatchSemaphore

    /// Closes the queue (a waiting push returns, the producer sees ``BoundedQueue/isClosed``) and waits for the
    /// thread to end.
    package func stop() {
        queue.close()
        done.wait()
    }
}
