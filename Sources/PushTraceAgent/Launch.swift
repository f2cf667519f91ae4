import Foundation
import PushTraceRecords

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// One run of one process, named `<start, 13 digits of epoch ms>-<process>-<pid>-<nonce>` so that its files sort by
/// time and say who wrote them.
///
/// Several launches of one kind can be alive at once (two service-extension processes; the app and a second
/// recorder in it), so a launch never takes over another's files or in-flight work because it started later. It does
/// only when that launch has ended: its process is gone, or its files have gone untouched for longer than a live
/// launch leaves them.
enum Launch {
    static func name(process: ProcessKind, now: Int64) -> String {
        let digits = String(now)
        let nonce = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return String(repeating: "0", count: max(0, 13 - digits.count)) + digits + "-\(process.rawValue)-\(getpid())-\(nonce)"
    }

    /// The launch part of one of the agent's file names: `<13 digits>-<process>-<pid>[-<nonce>]`, without the file
    /// sequence and extension (files of earlier versions have no nonce).
    static func of(fileName name: String) -> String? {
        let stem = name.hasSuffix(".ndjson") ? String(name.dropLast(".ndjson".count)) : name
        let parts = stem.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].count == 13, ProcessKind(rawValue: String(parts[1])) != nil, Int32(parts[2]) != nil
        else { return nil }
        // …-<pid>-<nonce>-<sequence> or, before nonces, …-<pid>-<sequence>.
        let kept = parts.count >= 5 ? 4 : 3
        return parts.prefix(kept).joined(separator: "-")
    }

    static func process(of launch: String) -> ProcessKind? {
        let parts = launch.split(separator: "-")
        return parts.count >= 2 ? ProcessKind(rawValue: String(parts[1])) : nil
    }

    static func pid(of launch: String) -> Int32? {
        let parts = launch.split(separator: "-")
        return parts.count >= 3 ? Int32(parts[2]) : nil
    }

    /// Whether `launch` has ended: its process no longer exists, or (when that cannot be told, as when a process ID
    /// was reused) the file it keeps touching was last modified more than `staleAfter` seconds ago.
    static func hasEnded(_ launch: String, touched url: URL, staleAfter: TimeInterval) -> Bool {
        guard let pid = pid(of: launch) else { return true }
        if pid == getpid() { return !Launches.isOwn(launch) }
        if kill(pid, 0) != 0 && errno == ESRCH { return true }
        let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
        return modified.map { Date().timeIntervalSince($0) > staleAfter } ?? true
    }
}

/// The launches this process started: a launch carrying this process's ID but not listed here belongs to an earlier
/// process that had the same ID. Process-wide by nature, as process IDs are.
final class Launches: @unchecked Sendable {
    private static let current = Launches()
    private let lock = NSLock()
    private var names: Set<String> = []

    static func register(_ launch: String) { _ = current.lock.withLock { current.names.insert(launch) } }
    static func isOwn(_ launch: String) -> Bool { current.lock.withLock { current.names.contains(launch) } }
}
