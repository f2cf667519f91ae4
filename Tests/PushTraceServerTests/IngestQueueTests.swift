import Foundation
import Logging
import PushTraceStore
import Testing

@testable import PushTraceServer

@Suite("The writers' queue: a writer with nothing to do is suspended, and resumed by work, a reader or the stop")
struct IngestQueueTests {
    /// Long enough that a writer resumed before it ran out was resumed by something else.
    static let longPause: TimeInterval = 600

    @Test("a waiting writer is resumed by a submission and takes it", .timeLimit(.minutes(1)))
    func resumedBySubmission() async throws {
        let queue = IngestQueue(settings: ServerSettings())
        let writer = Task { await queue.next(pause: Self.longPause, main: true) }
        try await Self.until { queue.suspendedWriters == 1 }
        let upload = Task { try await Self.submit(queue, owner: "token-a") }
        let batch = await writer.value
        #expect(batch.submissions.count == 1 && !batch.finished && batch.depth == 0)
        Self.answer(batch)
        #expect(try await upload.value.appID == "app")
    }

    @Test("a writer whose pause runs out takes an empty batch, and is not finished")
    func pauseRunsOut() async {
        let queue = IngestQueue(settings: ServerSettings())
        let batch = await queue.next(pause: 0.01, main: true)
        #expect(batch.submissions.isEmpty && !batch.finished && !batch.readersWaiting)
        #expect(queue.suspendedWriters == 0)
    }

    @Test("stopping resumes every waiting writer, and each finishes once what waits is taken", .timeLimit(.minutes(1)))
    func stopFinishes() async throws {
        let queue = IngestQueue(settings: ServerSettings())
        let upload = Task { try await Self.submit(queue, owner: "token-a") }
        try await Self.until { queue.depth == 1 }
        let main = await queue.next(pause: 0, main: true)
        let helper = Task { await queue.next(pause: Self.longPause, main: false) }
        #expect(main.submissions.count == 1)
        try await Self.until { queue.suspendedWriters == 1 }
        queue.stopAccepting()
        #expect(await helper.value.finished)
        #expect(await queue.next(pause: Self.longPause, main: true).finished)
        // Refused once stopping: 503.
        await #expect(throws: APIError.self) { try await Self.submit(queue, owner: "token-b") }
        Self.answer(main)
        _ = try await upload.value
    }

    @Test("a reader waiting for summaries resumes the main writer, not a further one", .timeLimit(.minutes(1)))
    func readerResumesMain() async throws {
        let queue = IngestQueue(settings: ServerSettings())
        let helper = Task { await queue.next(pause: Self.longPause, main: false) }
        try await Self.until { queue.suspendedWriters == 1 }
        let main = Task { await queue.next(pause: Self.longPause, main: true) }
        try await Self.until { queue.suspendedWriters == 2 }
        queue.summariesWaiting()
        let reader = Task { await queue.awaitSummaries() }
        let taken = await main.value
        #expect(taken.readersWaiting && taken.submissions.isEmpty)
        #expect(queue.suspendedWriters == 1)
        queue.summariesWritten(stillPending: false)
        await reader.value
        queue.stopAccepting()
        #expect(await helper.value.finished)
    }

    @Test("a token past its share of the queue is refused at once (429), another token is queued")
    func shareRefused() async throws {
        var settings = ServerSettings()
        (settings.queueCapacity, settings.tokenBudgetShare) = (8, 0.25)
        let queue = IngestQueue(settings: settings)
        let uploads = (0..<2).map { _ in Task { try await Self.submit(queue, owner: "token-a") } }
        try await Self.until { queue.depth == 2 }
        await #expect(throws: APIError.self) { try await Self.submit(queue, owner: "token-a") }
        let other = Task { try await Self.submit(queue, owner: "token-b") }
        try await Self.until { queue.depth == 3 }
        Self.answer(await queue.next(pause: 0, main: true))
        for upload in uploads { _ = try await upload.value }
        _ = try await other.value
    }

    private static func submit(_ queue: IngestQueue, owner: String) async throws -> IngestResult {
        let bundle = IngestWriter.Bundle(source: "test", receivedAt: 0, items: [], owner: owner)
        return try await withCheckedThrowingContinuation { queue.submit(bundle, logger: Logger(label: "test"), $0) }
    }

    /// What a writer would answer, without a store.
    private static func answer(_ batch: IngestQueue.Batch) {
        for submission in batch.submissions {
            submission.continuation.resume(
                returning: IngestResult(
                    appID: "app", bundleID: "b", accepted: 0, rejected: 0, duplicate: false, rejections: [], clockOffsetMs: 0))
        }
    }

    /// Returns once `condition` holds, which another task makes true.
    private static func until(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(2)) }
    }
}

extension IngestQueue {
    /// Awaits ``awaitSummaries(_:)``.
    func awaitSummaries() async {
        await withCheckedContinuation { awaitSummaries($0) }
    }
}
