import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// The lock the app and its service extension take while packing records into bundles and claiming bundles to send
/// (`state/pack.lock`, `flock`): two processes packing at once would put the same records in two bundles.
///
/// It is held only around that file work, never across a network call, and released by the system if the process
/// dies: iOS terminates a suspended process that holds a file lock in a shared container, so it must never be held
/// long.
struct PackLock {
    let url: URL

    init(container: AgentContainer) { url = container.state.appendingPathComponent("pack.lock") }

    /// Runs `body` if the lock is free right now; nil otherwise (the size bound's cleanup, which must not wait).
    func ifFree<T>(_ body: () throws -> T) rethrows -> T? {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return nil }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// Runs `body` holding the lock, trying for up to `wait` seconds (sleeping between tries, never blocking a
    /// thread); nil, and `body` not run, when another process held it all that time or the lock file cannot be
    /// opened.
    func withLock<T>(wait: TimeInterval, isolation: isolated (any Actor)? = #isolation, _ body: () throws -> T) async rethrows -> T? {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, wait) * 1_000_000_000)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, DispatchTime.now().uptimeNanoseconds < deadline,
                (try? await Task.sleep(nanoseconds: 5_000_000)) != nil
            else { return nil }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
