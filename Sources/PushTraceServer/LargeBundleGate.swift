import Foundation

/// Lets only a few large bundles be decoded and held in memory at once.
///
/// A decoded record costs about a kilobyte and a half; most bundles hold a few dozen, but the backend's daily
/// `push.sent` files hold thousands, and they arrive together. Once a request has decoded more than
/// ``ServerSettings/largeBundleRecords`` records it takes a slot here, waiting (and so reading no more of its body:
/// TCP pushes back on the client) while every slot is held, and gives it back once its bundle is committed or
/// refused. Small bundles never wait, and a slot holder never waits on anything but the writer, so nothing
/// deadlocks.
final class LargeBundleGate: @unchecked Sendable {
    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(slots: Int) {
        free = slots
    }

    /// Takes a slot, waiting for one when all are held.
    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = lock.withLock {
                guard free == 0 else {
                    free -= 1
                    return true
                }
                waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives a slot back, to the longest waiter when there is one.
    func leave() {
        let next = lock.withLock {
            guard !waiting.isEmpty else {
                free += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return waiting.removeFirst()
        }
        next?.resume()
    }
}
