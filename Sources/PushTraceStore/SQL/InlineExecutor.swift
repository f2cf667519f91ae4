import Synchronization

/// Runs an async body to its end on the calling thread, for a body that never suspends: the store's SQL, written once
/// as async functions, on a session that answers each statement at once (SQLite inside GRDB's access; PostgreSQL's
/// connection on the store's own thread, which waits for each answer). The body's jobs run here, one after another,
/// so the session's connection is used on the thread that holds it.
package final class InlineExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])

    private init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
    }

    /// What `body` answers, run on this thread. `body` may use values of this thread's (a connection GRDB lends it):
    /// it has ended before this returns. A body that suspends is a fault of pushtrace's, and stops the process:
    /// what it holds of the caller's must not outlive the call.
    package static func run<T>(_ body: () async throws -> T) throws -> T {
        let executor = InlineExecutor()
        let outcome = Outcome<T>()
        withoutActuallyEscaping(body) { body in
            let task = Unchecked(body)
            Task(executorPreference: executor) {
                let result: Result<Unchecked<T>, any Error>
                do { result = .success(Unchecked(try await task.value())) } catch { result = .failure(error) }
                outcome.result.withLock { $0 = result }
            }
            while let job = executor.jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job.runSynchronously(on: executor.asUnownedTaskExecutor())
            }
            // Checked before the body may no longer be held.
            precondition(outcome.result.withLock { $0 } != nil, "the store's SQL suspended where it must run inline")
        }
        return try outcome.result.withLock { $0 }!.get().value
    }
}

/// What the inline task answered, once it has.
private final class Outcome<T>: Sendable {
    let result = Mutex<Result<Unchecked<T>, any Error>?>(nil)
}

/// A value handed between the caller's thread and the inline task, which runs on that thread before `run` returns.
private struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
