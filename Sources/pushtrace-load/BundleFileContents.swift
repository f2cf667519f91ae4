import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bundle file's bytes and modification time, read with one `open`, `fstat` and as many `read`s as it takes.
///
/// Foundation's `contents(atPath:)` and `attributesOfItem(atPath:)` cost a quarter of the load generator's CPU,
/// which on a shared machine is taken from the server it measures.
struct BundleFileContents: Sendable {
    var bytes: ByteBuffer
    /// Milliseconds since 1970.
    var modified: Int64

    /// Reads `path`, or returns nil when it cannot be opened or read.
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        modified = Self.milliseconds(info)
        // One byte more than the file, so that the read that finds its end needs no larger buffer.
        var buffer = ByteBufferAllocator().buffer(capacity: Int(info.st_size) + 1)
        var failed = false
        while true {
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { target in
                let count = read(fd, target.baseAddress, target.count)
                failed = count < 0
                return max(count, 0)
            }
            if failed { return nil }
            if count == 0 { break }
        }
        bytes = buffer
    }

    /// The modification time of the file at `path` in milliseconds since 1970, or nil when it cannot be read.
    static func modified(path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? milliseconds(info) : nil
    }

    private static func milliseconds(_ info: stat) -> Int64 {
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
