import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PushTraceCore
import PushTraceStore

/// The bounded queue between the requests and the writers, and the readers waiting for summaries.
///
/// Requests append submissions (or are refused at once: 429 when full or when their token holds its share of it, 503
/// once stopping); the writers take them a batch at a time, round robin between tokens (``FairQueue``). A reader that
/// needs the summaries of everything acknowledged so far waits here until the main writer has written them. A writer
/// with nothing to do is suspended, holding no thread, until a submission, a reader or the server's stop resumes it,
/// or its pause runs out.
final class IngestQueue: Sendable {
    struct Submission: Sendable {
        var bundle: IngestWriter.Bundle
        var continuation: CheckedContinuation<IngestResult, any Error>
        var logger: Logger
    }

    /// What a writer takes at once.
    struct Batch {
        var submissions: [Submission]
        /// Submissions still waiting after this batch.
        var depth: Int
        var readersWaiting: Bool
        /// The queue is stopping and empty: the writer finishes.
        var finished: Bool
    }

    /// A writer suspended in ``next(pause:main:)``.
    private struct Parked: Sendable {
        var id: Int
        /// The writer that writes the deferred summaries and lets their readers go.
        var main: Bool
        var continuation: CheckedContinuation<Void, Never>
        /// Resumes the writer when its pause runs out; cancelled when something else resumes it first.
        var timer: Scheduled<Void>?

        func resume() {
            timer?.cancel()
            continuation.resume()
        }
    }

    private struct State: Sendable {
        var waiting = FairQueue<Submission>()
        var accepting = true
        var summariesPending = false
        var summaryReaders: [CheckedContinuation<Void, Never>] = []
        var parked: [Parked] = []
        var parkings = 0

        /// Whether a writer has something to do now, so must not be suspended.
        func hasWork(main: Bool) -> Bool {
            !waiting.isEmpty || !accepting || (main && !summaryReaders.isEmpty)
        }

        /// One suspended writer taken out to be resumed: the main one when `main` (if suspended), else any.
        mutating func unpark(main: Bool = false) -> Parked? {
            guard let index = main ? parked.firstIndex(where: \.main) : parked.indices.first else { return nil }
            return parked.remove(at: index)
        }
    }

    private let settings: ServerSettings
    private let state = NIOLockedValueBox(State())

    init(settings: ServerSettings) {
        self.settings = settings
    }

    /// How many submissions wait.
    var depth: Int { state.withLockedValue { $0.waiting.count } }

    /// How many writers are suspended, waiting for work.
    var suspendedWriters: Int { state.withLockedValue { $0.parked.count } }

    /// Queues a submission, or refuses it at once.
    func submit(_ bundle: IngestWriter.Bundle, logger: Logger, _ continuation: CheckedContinuation<IngestResult, any Error>) {
        let settings = settings
        let outcome = state.withLockedValue { state -> Result<Parked?, APIError> in
            guard state.accepting else {
                return .failure(.unavailable("the server is shutting down", retryAfter: settings.retryAfterUnavailable))
            }
            let share = max(1, Int(Double(settings.queueCapacity) * settings.tokenBudgetShare))
            guard state.waiting.count < settings.queueCapacity,
                bundle.owner.map({ state.waiting.count(of: $0) < share }) ?? true
            else {
                return .failure(.overloaded(retryAfter: settings.retryAfterOverloaded))
            }
            state.waiting.append(Submission(bundle: bundle, continuation: continuation, logger: logger), owner: bundle.owner ?? "")
            return .success(state.unpark())
        }
        switch outcome {
        case .success(let writer): writer?.resume()
        case .failure(let error): continuation.resume(throwing: error)
        }
    }

    /// Resumes `continuation` once the summaries of everything acknowledged so far are written.
    func awaitSummaries(_ continuation: CheckedContinuation<Void, Never>) {
        let (pending, writer) = state.withLockedValue { state -> (Bool, Parked?) in
            guard state.summariesPending else { return (false, nil) }
            state.summaryReaders.append(continuation)
            return (true, state.unpark(main: true))
        }
        if !pending { continuation.resume() }
        writer?.resume()
    }

    /// Refuses submissions from now on; the writers finish once they have taken what waits.
    func stopAccepting() {
        let writers = state.withLockedValue { state in
            state.accepting = false
            defer { state.parked.removeAll() }
            return state.parked
        }
        for writer in writers { writer.resume() }
    }

    /// The next batch, suspending for up to `pause` when there is nothing to do. `main`: the writer that writes
    /// summaries, which readers waiting for them also resume. Run on the writer's own executor, so that taking work
    /// that waits costs no hop to another thread and back.
    nonisolated(nonsending) func next(pause: TimeInterval, main: Bool) async -> Batch {
        if state.withLockedValue({ !$0.hasWork(main: main) }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Not suspended when work arrived since the check above.
                let id = state.withLockedValue { state -> Int? in
                    guard !state.hasWork(main: main) else { return nil }
                    state.parkings += 1
                    state.parked.append(Parked(id: state.parkings, main: main, continuation: continuation))
                    return state.parkings
                }
                guard let id else { return continuation.resume() }
                let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(Int64(pause * 1e9))) {
                    if let writer = self.takeParked(id) { writer.resume() }
                }
                // Kept for cancelling, unless the writer was resumed meanwhile: then cancelled now.
                let kept = state.withLockedValue { state in
                    guard let index = state.parked.firstIndex(where: { $0.id == id }) else { return false }
                    state.parked[index].timer = timer
                    return true
                }
                if !kept { timer.cancel() }
            }
        }
        let (batch, other) = state.withLockedValue { state -> (Batch, Parked?) in
            if state.waiting.isEmpty, !state.accepting {
                return (Batch(submissions: [], depth: 0, readersWaiting: false, finished: true), nil)
            }
            let submissions = state.waiting.next(maxCount: settings.maxBundlesPerCommit, maxCost: settings.maxLinesPerCommit) {
                $0.bundle.lines
            }
            let batch = Batch(
                submissions: submissions, depth: state.waiting.count, readersWaiting: !state.summaryReaders.isEmpty,
                finished: false)
            // Another writer, if the store has several, takes what is left.
            return (batch, state.waiting.isEmpty ? nil : state.unpark())
        }
        other?.resume()
        return batch
    }

    /// The suspended writer `id`, taken out to be resumed; nil when something resumed it already.
    private func takeParked(_ id: Int) -> Parked? {
        state.withLockedValue { state in state.parked.firstIndex { $0.id == id }.map { state.parked.remove(at: $0) } }
    }

    /// Marks summaries as waiting to be written: readers arriving from now on wait for them.
    func summariesWaiting() {
        state.withLockedValue { $0.summariesPending = true }
    }

    /// Records whether summaries still wait, and lets the waiting readers go.
    func summariesWritten(stillPending: Bool) {
        let readers = state.withLockedValue { state in
            state.summariesPending = stillPending
            defer { state.summaryReaders = [] }
            return state.summaryReaders
        }
        for reader in readers { reader.resume() }
    }
}
