import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `pushtrace serve` as a child process on a free loopback port.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let stderr = Pipe()

    var url: String { "http://127.0.0.1:\(port)" }

    init(arguments: [String], in directory: URL) async throws {
        port = try Self.freePort()
        process.executableURL = Executable.url
        process.arguments = ["serve", "--port", String(port)] + arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        for _ in 0..<200 {
            if let (_, response) = try? await URLSession.shared.data(from: URL(string: "\(url)/healthz")!),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "the server did not start"])
    }

    /// Sends SIGTERM and waits: the exit status of a graceful shutdown.
    func stop() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends SIGKILL, as a crash or the OOM killer would, and waits until the process is gone.
    func kill() async throws {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    deinit { if process.isRunning { process.terminate() } }

    /// A port the kernel has just handed out, so free for the server to take.
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw CocoaError(.featureUnsupported) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
