import Foundation
import Testing

/// Runs the built `pushtrace` executable, as a user would.
struct Executable {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let url: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ].map { $0.appendingPathComponent("pushtrace") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    static func run(
        _ arguments: [String], in directory: URL, environment: [String: String] = [:], executable: URL = url
    ) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting, so a large output never blocks the child on a full pipe.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// A temporary working folder for one test.
final class WorkFolder: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-cli-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }

    func write(_ name: String, _ lines: [String]) throws {
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: url.appendingPathComponent(name))
    }

    func write(_ name: String, bytes: [UInt8]) throws {
        try Data(bytes).write(to: url.appendingPathComponent(name))
    }

    func run(_ arguments: String...) throws -> Executable.Output { try Executable.run(arguments, in: url) }

    func run(_ arguments: [String], environment: [String: String]) throws -> Executable.Output {
        try Executable.run(arguments, in: url, environment: environment)
    }

    /// Runs the executable on a thread of its own: waiting for it must not hold one of Swift concurrency's few
    /// threads while an in-process server needs them to answer the child.
    func runDetached(_ arguments: [String], environment: [String: String] = [:]) async throws -> Executable.Output {
        try await withCheckedThrowingContinuation { continuation in
            let url = self.url
            Thread { continuation.resume(with: Result { try Executable.run(arguments, in: url, environment: environment) }) }.start()
        }
    }
}
