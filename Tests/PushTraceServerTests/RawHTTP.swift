import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP exchange, for what an HTTP client library hides: what the server sends after only the headers.
enum RawHTTP {
    struct Failure: Error { var what: String }

    /// `exchange` on a thread of its own: the blocking reads must not hold one of Swift concurrency's few threads
    /// while the in-process server needs them to answer.
    static func exchangeDetached(port: Int, send text: String, readTimeout: Int) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try exchange(port: port, send: text, readTimeout: readTimeout) }) }.start()
        }
    }

    /// Sends `text` to 127.0.0.1:`port` and returns what arrives before `readTimeout` seconds pass without more.
    static func exchange(port: Int, send text: String, readTimeout: Int) throws -> String {
        try exchangeWithEnd(port: port, send: text, readTimeout: readTimeout).text
    }

    /// `exchangeWithEnd` on a thread of its own.
    static func exchangeWithEndDetached(port: Int, send text: String, readTimeout: Int) async throws -> (text: String, closed: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try exchangeWithEnd(port: port, send: text, readTimeout: readTimeout) }) }.start()
        }
    }

    /// What arrives, and whether the server closed the connection (rather than `readTimeout` passing in silence).
    static func exchangeWithEnd(port: Int, send text: String, readTimeout: Int) throws -> (text: String, closed: Bool) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(what: "socket") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(what: "connect") }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(text.utf8)
        guard Glibc.send(socket, bytes, bytes.count, 0) == bytes.count else { throw Failure(what: "send") }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &buffer, buffer.count, 0)
        return (count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : "", count == 0)
    }
}
