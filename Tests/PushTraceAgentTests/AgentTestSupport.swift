import Foundation
import PushTraceAgent
import PushTraceGzip
import Testing

/// A temporary App Group container directory.
final class TemporaryContainer: Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-agent-\(UUID().uuidString)")
    let container: AgentContainer

    init() throws { container = try AgentContainer(directory: directory) }
    deinit { try? FileManager.default.removeItem(at: directory) }

    var root: URL { container.root }

    /// Every line of every record file, parsed: sealed files (older) first, then the running ones.
    func recordLines() throws -> [[String: Any]] {
        try ["sealed", "records"].flatMap { folder -> [[String: Any]] in
            let url = root.appendingPathComponent(folder)
            return try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().flatMap { name in
                try Self.parse(Data(contentsOf: url.appendingPathComponent(name)), file: name)
            }
        }
    }

    /// The files in one of the container's folders.
    func files(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? []).sorted()
    }

    static func parse(_ data: Data, file: String) throws -> [[String: Any]] {
        try data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).enumerated().map { index, line in
            let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            return try #require(object, "line \(index + 1) of \(file) is not whole JSON: \(String(decoding: line, as: UTF8.self))")
        }
    }

    /// Decompresses a bundle body (all its gzip members).
    static func gunzip(_ data: Data) throws -> Data {
        var out = Data()
        let inflater = try Inflater(format: .gzip)
        try data.withUnsafeBytes { try inflater.consume($0) { out.append(contentsOf: $0) } }
        try inflater.finish()
        return out
    }
}

/// Runs the probe executable (an app process stand-in) and waits on a thread of its own, not a cooperative one.
enum Probe {
    static let url: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ].map { $0.appendingPathComponent("pushtrace-agent-probe") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    /// The exit status, or the signal that ended it (as `terminationReason` says).
    struct Ending: Sendable, Equatable {
        var status: Int32
        var signalled: Bool
    }

    static func run(_ arguments: [String]) async throws -> Ending {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let process = Process()
                process.executableURL = url
                process.arguments = arguments
                do {
                    try process.run()
                    process.waitUntilExit()
                    continuation.resume(
                        returning: Ending(
                            status: process.terminationStatus,
                            signalled: process.terminationReason == .uncaughtSignal))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// Runs `body` on a thread of its own as soon as `condition` holds (polled every half millisecond), and returns the
/// time it ran at. A pass that packs holds one of Swift's few cooperative threads while it writes bundles, so a task
/// polling there could wake long after the moment; a thread of its own does not wait for them.
func onOwnThread(
    when condition: @escaping @Sendable () -> Bool, timeout: TimeInterval = 60, _ body: @escaping @Sendable () -> Void
) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        Thread {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while !condition() {
                guard Date() < deadline else { return continuation.resume(returning: false) }
                usleep(500)
            }
            body()
            continuation.resume(returning: true)
        }.start()
    }
}

/// A value set on one thread and read on another.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// Runs its jobs on a serial queue of its own, not on Swift's few cooperative threads: a pass started with it as its
/// executor preference (the uploader actor's jobs included) runs at once even while other tests hold every
/// cooperative thread with synchronous work.
final class OwnQueueExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "pushtrace-test-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
