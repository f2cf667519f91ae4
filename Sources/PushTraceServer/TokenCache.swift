import Foundation
import NIOConcurrencyHelpers
import PushTraceStore

/// The tokens the server has read from the store, by token ID: found ones for a short while (a revocation takes
/// effect within that), absent ones for longer and with a bound of their own.
///
/// An ingest token ships inside every copy of an app, so anyone can send made-up tokens. With this cache each
/// distinct ID sent again and again costs one store read, and a wrong secret for a known ID costs none. Absent IDs
/// live in a bounded first-in, first-out table of their own, so a flood of made-up IDs cannot push live tokens out.
final class TokenCache: Sendable {
    private enum Entry {
        case found(StoredToken, until: Date)
        case absent(until: Date)
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

    /// The stored token with `id`, from the cache or by `read` (in the caller's own task: an extra task to share
    /// one read would be one more hop to schedule on a busy server). Concurrent first requests for one ID may each
    /// read; every later one is answered from the cache.
    func token(id: String, read: @Sendable () async throws -> StoredToken?) async throws -> StoredToken? {
        let now = Date()
        let cached: StoredToken?? = state.withLockedValue { state in
            switch state.entries[id] {
            case .found(let token, let until) where until > now: return .some(token)
            case .absent(let until) where until > now: return .some(nil)
            default: return nil
            }
        }
        if let cached { return cached }
        let token = try await read()
        remember(id: id, token: token)
        return token
    }

    /// Caches what the store answered for `id`.
    private func remember(id: String, token: StoredToken?) {
        let now = Date()
        state.withLockedValue { state in
            if case .found = state.entries[id] { state.foundCount -= 1 }
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
