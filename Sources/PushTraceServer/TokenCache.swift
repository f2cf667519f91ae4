import Foundation
import NIOConcurrencyHelpers
import PushTraceStore

/// The tokens the server has read from the store, by token ID: found ones for a short while (a revocation takes
/// effect within that), absent ones for longer and with a bound of their own.
///
/// An ingest token ships inside every copy of an app, so anyone can send made-up tokens. With this cache each
/// distinct ID costs at most one store read however often it is sent, a wrong secret for a known ID costs none,
/// and concurrent requests naming one ID share a single read. Absent IDs live in a bounded first-in, first-out
/// table of their own, so a flood of made-up IDs cannot push live tokens out.
final class TokenCache: Sendable {
    private enum Entry {
        case found(StoredToken, until: Date)
        case absent(until: Date)
        case pending(Task<StoredToken?, any Error>)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// The absent IDs in the order they were cached, for eviction past ``TokenCache/absentLimit``.
        var absentOrder: [String] = []
        var absentHead = 0
        var foundCount = 0
    }

    /// How long a found token is trusted without reading it again.
    let foundSeconds: Double
    /// How long an ID the store does not hold is answered without asking again. Token IDs are 48 random bits
    /// drawn when a token is made, so an ID asked for before it exists is one nobody was given.
    let absentSeconds: Double
    let foundLimit: Int
    let absentLimit: Int
    private let state = NIOLockedValueBox(State())

    init(foundSeconds: Double, absentSeconds: Double = 600, foundLimit: Int = 10_000, absentLimit: Int = 100_000) {
        self.foundSeconds = foundSeconds
        self.absentSeconds = absentSeconds
        self.foundLimit = foundLimit
        self.absentLimit = absentLimit
    }

    /// The stored token with `id`, from the cache or by `read` (at most one at a time per ID).
    func token(id: String, read: @escaping @Sendable () async throws -> StoredToken?) async throws -> StoredToken? {
        let now = Date()
        enum Next {
            case answer(StoredToken?)
            case wait(Task<StoredToken?, any Error>)
        }
        let next: Next = state.withLockedValue { state in
            switch state.entries[id] {
            case .found(let token, let until) where until > now: return .answer(token)
            case .absent(let until) where until > now: return .answer(nil)
            case .pending(let task): return .wait(task)
            case .found: state.foundCount -= 1
            case .absent, nil: break
            }
            let task = Task { try await read() }
            state.entries[id] = .pending(task)
            return .wait(task)
        }
        switch next {
        case .answer(let token):
            return token
        case .wait(let task):
            do {
                let token = try await task.value
                remember(id: id, token: token, from: task)
                return token
            } catch {
                state.withLockedValue { state in
                    if case .pending(let pending) = state.entries[id], pending == task { state.entries[id] = nil }
                }
                throw error
            }
        }
    }

    /// Replaces the pending read `task` of `id` with its answer (the first waiter to get there does it).
    private func remember(id: String, token: StoredToken?, from task: Task<StoredToken?, any Error>) {
        let now = Date()
        state.withLockedValue { state in
            guard case .pending(let pending) = state.entries[id], pending == task else { return }
            guard let token else {
                guard absentSeconds > 0 else {
                    state.entries[id] = nil
                    return
                }
                state.entries[id] = .absent(until: now.addingTimeInterval(absentSeconds))
                state.absentOrder.append(id)
                Self.evictAbsent(&state, keeping: absentLimit)
                return
            }
            guard foundSeconds > 0 else {
                state.entries[id] = nil
                return
            }
            if state.foundCount >= foundLimit {
                // Live tokens are few: past the bound something is wrong, and starting over costs one read each.
                state.entries = state.entries.filter { if case .found = $0.value { false } else { true } }
                state.foundCount = 0
            }
            state.entries[id] = .found(token, until: now.addingTimeInterval(foundSeconds))
            state.foundCount += 1
        }
    }

    /// Drops the oldest absent IDs until at most `limit` remain listed.
    private static func evictAbsent(_ state: inout State, keeping limit: Int) {
        while state.absentOrder.count - state.absentHead > limit {
            let oldest = state.absentOrder[state.absentHead]
            state.absentHead += 1
            if case .absent = state.entries[oldest] { state.entries[oldest] = nil }
        }
        // Compact the list once its dead head outgrows the live part.
        if state.absentHead > limit {
            state.absentOrder.removeFirst(state.absentHead)
            state.absentHead = 0
        }
    }
}
