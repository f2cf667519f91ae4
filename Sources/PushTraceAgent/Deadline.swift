import Foundation

/// Runs `operation`, cancelled once `seconds` have passed: a request's `timeoutInterval` bounds only the time between
/// bytes, and the agent's bounds (the service extension's seconds, an attachment's download) are on the whole.
/// Throws `expired` when the time ran out first.
func withDeadline<T: Sendable>(
    seconds: TimeInterval, expired: @autoclosure () -> any Error,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let first = try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
    guard let first else { throw expired() }
    return first
}
