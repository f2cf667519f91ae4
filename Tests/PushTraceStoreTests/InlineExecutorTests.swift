import Foundation
import Synchronization
import Testing

@testable import PushTraceStore

@Suite("Async SQL run inline on the caller's thread")
struct InlineExecutorTests {
    /// A session's awaited call that answers at once, as SQLite's does.
    private struct AtOnce {
        let thread: pthread_t
        func rows(_ count: Int) async throws -> [Int] {
            #expect(pthread_equal(pthread_self(), thread) != 0, "the body ran on another thread than the caller's")
            return Array(0..<count)
        }
    }

    private struct Refused: Error {}

    private func body(_ session: AtOnce) async throws -> Int {
        var total = 0
        for count in 1...4 { total += try await session.rows(count).count }
        return total
    }

    @Test("a body of awaited calls that answer at once runs to its end on the caller's thread, from a thread or a task")
    func runsOnTheCallersThread() async throws {
        #expect(try InlineExecutor.run { try await body(AtOnce(thread: pthread_self())) } == 10)
        let done = DispatchSemaphore(value: 0)
        let answer = Answer()
        let thread = Thread {
            let found = try? InlineExecutor.run { try await body(AtOnce(thread: pthread_self())) }
            answer.value.withLock { $0 = found }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(answer.value.withLock { $0 } == 10)
    }

    @Test("what the body throws is thrown to the caller, and a value of the caller's it changes is changed")
    func throwsAndMutates() {
        var seen = 0
        #expect(throws: Refused.self) {
            try InlineExecutor.run {
                seen = try await body(AtOnce(thread: pthread_self()))
                throw Refused()
            }
        }
        #expect(seen == 10)
    }
}

/// What the thread's run answered.
private final class Answer: Sendable {
    let value = Mutex<Int?>(nil)
}
