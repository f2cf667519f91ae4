#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif
import Foundation

/// A file opened for appending: each `append` is one `write(2)` of whole lines, so that a process killed at any
/// moment leaves complete lines behind (or, at worst, one cut last line), and readers in other processes never see
/// two lines interleaved.
final class AppendOnlyFile {
    let url: URL
    private let descriptor: Int32
    /// Bytes in the file (this process is its only writer).
    private(set) var size: Int64

    init(url: URL) throws {
        self.url = url
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw AgentError.containerUnusable(url.path, reason: String(cString: strerror(errno)))
        }
        size = Int64(lseek(descriptor, 0, SEEK_END))
    }

    deinit { close(descriptor) }

    /// Appends `bytes` in one write (retried only for the part a signal interrupted). False when the disk refused.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        size += Int64(bytes.count)
        return true
    }
}

/// A small file rewritten in place: the in-flight marker.
final class RewrittenFile: @unchecked Sendable {
    private let descriptor: Int32
    private let lock = NSLock()

    init(url: URL) {
        descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Replaces the contents with `bytes` (nothing, to empty it).
    func rewrite(_ bytes: [UInt8]) {
        guard descriptor >= 0 else { return }
        lock.withLock {
            bytes.withUnsafeBytes { _ = pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            _ = ftruncate(descriptor, off_t(bytes.count))
        }
    }
}
