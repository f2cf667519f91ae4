import Foundation
import Logging
import PushTraceCore
import PushTraceStore

/// The bounded queue between the requests and the writer thread, and the readers waiting for summaries.
///
/// Requests append submissions (or are refused at once: 429 when full or when their token holds its share of it, 503
/// once stopping); the writer thread takes them a batch at a time, round robin between tokens (``FairQueue``). A reader that needs the summaries of everything acknowledged so far waits here
/// until the writer has written them.
final class IngestQueue: @unchecked Sendable {
    struct Submission {
        var bundle: IngestWriter.Bundle
        var continuation: CheckedContinuation<IngestResult, any Error>
        var logger: Logger
    }

    /// What the writer takes at once.
    struct Batch {
        var submissions: [Submission]
        /// Submissions still waiting after this batch.
        var depth: Int
        var readersWaiting: Bool
        /// The queue is stopping and empty: the writer finishes.
        var finished: Bool
    }

    private let settings: ServerSettings
    // Guards everything below; signalled when a submission or a reader arrives or the writer must stop.
    private let condition = NSCondition()
    private var waiting = FairQueue<Submission>()
    private var accepting = true
    private var summariesPending = false
    private var summaryReaders: [CheckedContinuation<Void, Never>] = []

    init(settings: ServerSettings) {
        self.settings = settings
    }

    /// Queues a submission, or refuses it at once.
    func submit(_ bundle: IngestWriter.Bundle, logger: Logger, _ continuation: CheckedContinuation<IngestResult, any Error>) {
        condition.lock()
        defer { condition.unlock() }
        guard accepting else {
            continuation.resume(
                throwing: APIError.unavailable(
                    "the server is shutting down",
                    retryAfter: settings.retryAfterUnavailable))
            return
        }
        let share = max(1, Int(Double(settings.queueCapacity) * settings.tokenBudgetShare))
        guard waiting.count < settings.queueCapacity,
            bundle.owner.map({ waiting.count(of: $0) < share }) ?? true
        else {
            continuation.resume(throwing: APIError.overloaded(retryAfter: settings.retryAfterOverloaded))
            return
        }
        waiting.append(Submission(bundle: bundle, continuation: continuation, logger: logger), owner: bundle.owner ?? "")
        if waiting.count == 1 { condition.signal() }
    }

    /// Resumes `continuation` once the summaries of everything acknowledged so far are written.
    func awaitSummaries(_ continuation: CheckedContinuation<Void, Never>) {
        condition.lock()
        defer { condition.unlock() }
        guard summariesPending else { return continuation.resume() }
        summaryReaders.append(continuation)
        condition.signal()
    }

    func stopAccepting() {
        condition.lock()
        accepting = false
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch, waiting up to `pause` when there is nothing to do.
    func next(pause: TimeInterval) -> Batch {
        condition.lock()
        defer { condition.unlock() }
        if waiting.isEmpty, summaryReaders.isEmpty, accepting {
            _ = condition.wait(until: Date(timeIntervalSinceNow: pause))
        }
        if waiting.isEmpty, !accepting { return Batch(submissions: [], depth: 0, readersWaiting: false, finished: true) }
        let batch = waiting.next(maxCount: settings.maxBundlesPerCommit, maxCost: settings.maxLinesPerCommit) {
            $0.bundle.lines
        }
        // Another writer, if the store has several, takes what is left.
        if !waiting.isEmpty { condition.signal() }
        return Batch(submissions: batch, depth: waiting.count, readersWaiting: !summaryReaders.isEmpty, finished: false)
    }

    /// Marks summaries as waiting to be written: readers arriving from now on wait for them.
    func summariesWaiting() {
        condition.lock()
        summariesPending = true
        condition.unlock()
    }

    /// Records whether summaries still wait, and lets the waiting readers go.
    func summariesWritten(stillPending: Bool) {
        condition.lock()
        summariesPending = stillPending
        let readers = summaryReaders
        summaryReaders = []
        condition.unlock()
        for reader in readers { reader.resume() }
    }
}
