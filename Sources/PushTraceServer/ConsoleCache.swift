import Foundation
import NIOConcurrencyHelpers

/// Answers the console computes from many rows (a week's report, the alert rules judged over every app), kept for a
/// short while per server: people open the same report and overview again and again, and each costs tens of
/// milliseconds of store reads. A cached answer says when it was computed (the report's period, the alerts' `now`).
final class ConsoleCache<Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value
        var until: ContinuousClock.Instant
    }

    let lifetime: Duration
    let limit: Int
    private let entries = NIOLockedValueBox([String: Entry]())

    init(lifetime: Duration, limit: Int = 256) {
        self.lifetime = lifetime
        self.limit = limit
    }

    /// The value kept under `key`, or `compute`'s, then kept. Concurrent first requests may each compute.
    func value(_ key: String, compute: () async throws -> Value) async throws -> Value {
        let now = ContinuousClock.now
        if let entry = entries.withLockedValue({ $0[key] }), entry.until > now { return entry.value }
        let value = try await compute()
        entries.withLockedValue { entries in
            if entries.count >= limit { entries = entries.filter { $0.value.until > now } }
            // Still full of live answers: the one that would end first goes.
            if entries.count >= limit, let first = entries.min(by: { $0.value.until < $1.value.until })?.key {
                entries[first] = nil
            }
            entries[key] = Entry(value: value, until: now + lifetime)
        }
        return value
    }
}
