import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// A file opened for appending: each `append` is one `write(2)` of whole lines, so that a process killed at any
/// moment leaves complete lines behind (or, at worst, one cut last line), and readers in other processes never see
/// two lines interleaved. A write the disk refuses part-way is cut back to the last whole line, so the next line
/// never lands on half of one.
final class AppendOnlyFile {
    let url: URL
    private let descriptor: Int32
    /// Bytes in the file (this process is its only writer).
    private(set) var size: Int64

    init(url: URL) throws {
        self.url = url
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw AgentError.containerUnusable(url.path, reason: String(cString: strerror(errno)))
        }
        FileProtection.apply(to: url)
        size = Int64(lseek(descriptor, 0, SEEK_END))
    }

    deinit { close(descriptor) }

    /// Appends `bytes` in one write (retried only for the part a signal interrupted). False when the disk refused;
    /// the file is then truncated back to what it held before.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                if offset > 0 { _ = ftruncate(descriptor, off_t(size)) }
                return false
            }
            offset += written
        }
        size += Int64(bytes.count)
        return true
    }

    /// Whether `url` still names this file: another launch may have sealed it (moved it to `sealed/`) while this
    /// process was suspended, and lines appended after that would go to a file the uploader has already taken.
    var isStillAtItsPath: Bool {
        var opened = stat(), named = stat()
        guard fstat(descriptor, &opened) == 0, stat(url.path, &named) == 0 else { return false }
        return opened.st_ino == named.st_ino && opened.st_dev == named.st_dev
    }
}

/// A small file rewritten in place: a launch's in-flight marker. If another launch removed it (judging this one
/// ended after a long quiet spell), the next rewrite creates it again, so a live launch's marker is always on disk.
final class RewrittenFile: @unchecked Sendable {
    private let url: URL
    private var descriptor: Int32
    private let lock = NSLock()
    /// Wall-clock time of the last rewrite: another launch removes a marker only after it has sat untouched for
    /// minutes, so the file's identity is checked only after a pause, off the path of a busy extension.
    private let clock: @Sendable () -> Int64
    private var lastRewrite: Int64

    /// - Parameter clock: Unix epoch milliseconds (the recorder's).
    init(url: URL, clock: @escaping @Sendable () -> Int64) {
        self.url = url
        self.clock = clock
        lastRewrite = clock()
        descriptor = Self.opening(url)
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    private static func opening(_ url: URL) -> Int32 {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 { FileProtection.apply(to: url) }
        return descriptor
    }

    /// Replaces the contents with `bytes` (nothing, to empty it). False when the file could not be written.
    @discardableResult
    func rewrite(_ bytes: [UInt8]) -> Bool {
        lock.withLock {
            let now = clock(), quiet = now - lastRewrite
            lastRewrite = now
            var opened = stat(), named = stat()
            if descriptor < 0
                || ((quiet > 60_000 || quiet < 0)
                    && (fstat(descriptor, &opened) != 0 || stat(url.path, &named) != 0 || opened.st_ino != named.st_ino))
            {
                if descriptor >= 0 { close(descriptor) }
                descriptor = Self.opening(url)
            }
            guard descriptor >= 0 else { return false }
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            return ftruncate(descriptor, off_t(bytes.count)) == 0 && written == bytes.count
        }
    }
}
