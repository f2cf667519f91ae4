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
    private let container: AgentContainer

    init(container: AgentContainer) {
        self.container = container
        url = container.state.appendingPathComponent("pack.lock")
    }

    /// This process's holders of this lock.
    var holders: PackLockHolders { PackLockHolders.of(container) }

    /// Runs `body` if the lock is free right now; nil otherwise (the size bound's cleanup, which must not wait).
    func ifFree<T>(_ body: () throws -> T) rethrows -> T? {
        guard holders.enter() else { return nil }
        defer { holders.leave() }
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
        while true {
            // Refused while the app's background time runs out; otherwise tried again while another process holds it.
            guard holders.enter() else { return nil }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { break }
            let failure = errno
            holders.leave()
            guard failure == EWOULDBLOCK || failure == EINTR, DispatchTime.now().uptimeNanoseconds < deadline,
                (try? await Task.sleep(nanoseconds: 5_000_000)) != nil
            else { return nil }
        }
        defer {
            flock(descriptor, LOCK_UN)
            holders.leave()
        }
        return try body()
    }
}

/// This process's side of one container's pack lock: how many of its passes hold it, and whether the app's
/// background time is running out. The file lock iOS watches at suspension belongs to the whole process, so this is
/// process-wide state, one per lock file, guarded by a condition.
package final class PackLockHolders: @unchecked Sendable {
    private static let all = NSLock()
    nonisolated(unsafe) private static var byPath: [String: PackLockHolders] = [:]

    /// The holders of the pack lock of `container`, the same object for every caller in this process.
    static func of(_ container: AgentContainer) -> PackLockHolders {
        let path = PackLock(container: container).url.path
        return all.withLock {
            if let holders = byPath[path] { return holders }
            let holders = PackLockHolders()
            byPath[path] = holders
            return holders
        }
    }

    private let condition = NSCondition()
    private var held = 0
    private var suspended = false

    /// Counts one more holder; false (and nothing counted) while suspended.
    func enter() -> Bool {
        condition.withLock {
            guard !suspended else { return false }
            held += 1
            return true
        }
    }

    func leave() {
        condition.withLock {
            held -= 1
            condition.broadcast()
        }
    }

    /// Whether the lock is refused: packing stops between bundles, and no pass takes the lock.
    var isSuspended: Bool { condition.withLock { suspended } }

    /// Refuses the lock from now on, and waits up to `timeout` for every holder to let it go (packing stops
    /// between bundles); true when none holds it. The app's background time is running out: iOS kills a process
    /// suspended while it holds a file lock in a shared container.
    @discardableResult
    func suspend(waitingUpTo timeout: TimeInterval) -> Bool {
        condition.withLock {
            suspended = true
            let deadline = Date(timeIntervalSinceNow: timeout)
            while held > 0, condition.wait(until: deadline) {}
            return held == 0
        }
    }

    /// ``suspend(waitingUpTo:)`` for every pack lock this process has used, within `timeout` in all: the app's
    /// background time is running out, whichever container its passes use.
    package static func suspendAll(waitingUpTo timeout: TimeInterval) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        for holders in all.withLock({ Array(byPath.values) }) {
            holders.suspend(waitingUpTo: max(0, deadline.timeIntervalSinceNow))
        }
    }

    /// Lets passes take the lock again: the app has time once more.
    func resume() {
        condition.withLock { suspended = false }
    }
}
