import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A bare TCP exchange, for what an HTTP client library hides: what the server sends after only the headers.
///
/// Each exchange runs on a thread of its own: its blocking reads must not hold one of Swift concurrency's few
/// threads while the in-process server needs them to answer.
enum RawHTTP {
    struct Failure: Error { var what: String }

    /// Sends `text` to 127.0.0.1:`port` and returns what arrives in the first read, waiting at most `readTimeout`
    /// seconds for it.
    static func exchangeDetached(port: Int, send text: String, readTimeout: Int) async throws -> String {
        try await exchangeWithEndDetached(port: port, send: text, readTimeout: readTimeout).text
    }

    /// What arrives in the first read, and whether the server closed the connection instead of answering (rather than
    /// `readTimeout` passing in silence).
    static func exchangeWithEndDetached(port: Int, send text: String, readTimeout: Int) async throws -> (text: String, closed: Bool) {
        try await detached {
            let socket = try connect(port: port, send: text, readTimeout: readTimeout)
            defer { close(socket) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &buffer, buffer.count, 0)
            return (count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : "", count == 0)
        }
    }

    /// Everything that arrives until the server closes the connection (or `readTimeout` seconds pass in silence):
    /// for an answer that may come in several reads.
    static func exchangeToEndDetached(port: Int, send text: String, readTimeout: Int) async throws -> String {
        try await detached {
            let socket = try connect(port: port, send: text, readTimeout: readTimeout)
            defer { close(socket) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while case let count = recv(socket, &buffer, buffer.count, 0), count > 0 {
                received += buffer[..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Uploads `body` (gzip) with `token` but holds back its last `holdBack` bytes, and returns what arrives in the
    /// first read (waiting at most `readTimeout` seconds): an upload that keeps what it decoded in the server.
    static func heldUploadDetached(port: Int, token: String, body: [UInt8], holdBack: Int, readTimeout: Int) async throws -> String {
        try await detached {
            let head =
                "POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n"
            let socket = try connect(port: port, send: head, readTimeout: readTimeout)
            defer { close(socket) }
            let sent = Array(body.dropLast(holdBack))
            _ = Glibc.send(socket, sent, sent.count, 0)
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        }
    }

    private static func detached<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// A socket connected to 127.0.0.1:`port` that has sent `text`, its reads timing out after `readTimeout` seconds.
    private static func connect(port: Int, send text: String, readTimeout: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(what: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw Failure(what: "connect")
        }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(text.utf8)
        guard Glibc.send(socket, bytes, bytes.count, 0) == bytes.count else {
            close(socket)
            throw Failure(what: "send")
        }
        return socket
    }
}
