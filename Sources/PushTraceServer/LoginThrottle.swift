import Foundation
import NIOConcurrencyHelpers

/// Slows down guessing at the console's sign-in (docs/console.md): after ``freeFailures`` failed sign-ins from one
/// client address within ``window``, each further attempt from it must wait: ``firstWait`` after the first failure
/// past them, twice as long after every failure, up to ``longestWait``. A sign-in that succeeds forgets the address's failures.
///
/// Kept in memory, per server: a guesser spread over several servers is slowed by each. The table is bounded; past
/// its bound the oldest addresses are forgotten.
final class LoginThrottle: Sendable {
    private struct Record {
        var failures: Int
        var last: Date
        var blockedUntil: Date
    }

    let freeFailures: Int
    let window: TimeInterval
    let firstWait: TimeInterval
    let longestWait: TimeInterval
    let limit: Int
    private let records = NIOLockedValueBox([String: Record]())

    init(
        freeFailures: Int = 5, window: TimeInterval = 900, firstWait: TimeInterval = 2, longestWait: TimeInterval = 300,
        limit: Int = 50_000
    ) {
        self.freeFailures = freeFailures
        self.window = window
        // Retry-After counts whole seconds: a shorter first wait would let the next try through unslowed.
        self.firstWait = max(1, firstWait)
        self.longestWait = longestWait
        self.limit = limit
    }

    /// The key a client's failures are counted under: its IPv4 address, or its IPv6 address's /64 (one network
    /// holds every address of it); clients whose address is unknown share one.
    static func key(_ address: String?) -> String {
        guard let address else { return "unknown" }
        guard address.contains(":") else { return address }
        var groups = address.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if let gap = groups.firstIndex(of: ""), address.contains("::") {
            let present = groups.filter { !$0.isEmpty }
            groups =
                Array(groups[..<gap]).filter { !$0.isEmpty }
                + Array(repeating: "0", count: max(0, 8 - present.count))
                + Array(groups[(gap + 1)...]).filter { !$0.isEmpty }
        }
        return groups.prefix(4).joined(separator: ":") + "::/64"
    }

    /// How many seconds `address` must still wait before it may try again, or nil when it may try now.
    func wait(for address: String, now: Date = Date()) -> Int? {
        records.withLockedValue { records in
            guard let record = records[address], record.blockedUntil > now else { return nil }
            return max(1, Int(record.blockedUntil.timeIntervalSince(now).rounded(.up)))
        }
    }

    /// Counts a failed sign-in from `address`; returns how long it must now wait, if at all.
    @discardableResult
    func failed(_ address: String, now: Date = Date()) -> Int? {
        records.withLockedValue { records in
            var record = records[address] ?? Record(failures: 0, last: now, blockedUntil: .distantPast)
            if now.timeIntervalSince(record.last) > window { record.failures = 0 }
            record.failures += 1
            record.last = now
            var wait: Int?
            if record.failures > freeFailures {
                let seconds = min(longestWait, firstWait * pow(2, Double(min(record.failures - freeFailures - 1, 20))))
                record.blockedUntil = now.addingTimeInterval(seconds)
                wait = Int(seconds.rounded(.up))
            }
            if records[address] == nil, records.count >= limit {
                // Forget the quietest tenth rather than refuse to count a new address.
                let oldest = records.sorted { $0.value.last < $1.value.last }.prefix(limit / 10).map(\.key)
                for key in oldest { records[key] = nil }
            }
            records[address] = record
            return wait
        }
    }

    /// A successful sign-in from `address`.
    func succeeded(_ address: String) {
        records.withLockedValue { $0[address] = nil }
    }
}
