import CZlib

/// Streaming decompression over the system zlib.
///
/// gzip input may hold several members back to back (each agent process compresses its own file and the uploader
/// concatenates them): at the end of each member the stream is reset and the next member is read. A body that ends
/// inside a member is an error, never a silently shorter bundle.
public final class Inflater {
    /// The compressed formats this type reads.
    public enum Format: Sendable {
        /// RFC 1952, one or more members.
        case gzip
        /// HTTP's `deflate`: a zlib stream (RFC 1950), or a raw deflate stream (RFC 1951) as some clients send.
        case deflate
    }

    /// Why decompression stopped.
    public enum Failure: Error, Equatable, Sendable {
        /// The input is not in the expected format (the message says where it went wrong).
        case corrupt(String)
        /// The input ended inside a compressed member.
        case truncated
    }

    private var stream = z_stream()
    private let format: Format
    private var initialised = false
    /// True between a member's first byte and its end.
    private var inMember = false
    private var membersCompleted = 0
    private var rawDeflateDecided = false
    /// Output space; left uninitialised because zlib writes before anything reads (bundles are many and small).
    private var output = [UInt8](unsafeUninitializedCapacity: 32 * 1024) { _, count in count = 32 * 1024 }

    public init(format: Format) throws {
        self.format = format
        try start(windowBits: format == .gzip ? 15 + 16 : 15)
    }

    deinit {
        if initialised { inflateEnd(&stream) }
    }

    private func start(windowBits: Int32) throws {
        if initialised { inflateEnd(&stream) }
        stream = z_stream()
        let status = inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw Failure.corrupt("zlib could not start (status \(status))") }
        initialised = true
    }

    /// Decompresses `input`, handing each piece of output to `sink` as it is produced.
    public func consume(_ input: UnsafeRawBufferPointer, _ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard var base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var remaining = input.count
        while remaining > 0 {
            if !inMember {
                if format == .gzip, membersCompleted > 0, base.pointee != 0x1f {
                    throw Failure.corrupt("bytes after gzip member \(membersCompleted) are not another gzip member")
                }
                if format == .deflate, !rawDeflateDecided {
                    // A zlib header's first byte has 8 (deflate) in its low nibble and passes a checksum with the second.
                    let looksZlib =
                        base.pointee & 0x0f == 8 && remaining >= 2
                        && (UInt16(base.pointee) << 8 | UInt16(base[1])) % 31 == 0
                    if !looksZlib { try start(windowBits: -15) }
                    rawDeflateDecided = true
                }
                if format == .deflate, membersCompleted > 0 {
                    throw Failure.corrupt("bytes after the end of the deflate stream")
                }
                inMember = true
            }
            stream.next_in = UnsafeMutablePointer(mutating: base)
            stream.avail_in = UInt32(min(remaining, Int(UInt32.max)))
            let before = Int(stream.avail_in)
            var status: Int32 = Z_OK
            repeat {
                let produced: Int = try output.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    switch status {
                    case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
                        return out.count - Int(stream.avail_out)
                    default:
                        let why = stream.msg.map { String(cString: $0) } ?? "status \(status)"
                        throw Failure.corrupt(why)
                    }
                }
                if produced > 0 {
                    try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
                }
                if status == Z_BUF_ERROR { break }
            } while status != Z_STREAM_END && (stream.avail_in > 0 || stream.avail_out == 0)
            let used = before - Int(stream.avail_in)
            base += used
            remaining -= used
            if status == Z_STREAM_END {
                inMember = false
                membersCompleted += 1
                if inflateReset(&stream) != Z_OK { throw Failure.corrupt("zlib could not reset") }
            }
        }
    }

    /// Declares the end of input: an error when it ended inside a member or before any member.
    public func finish() throws {
        if inMember || membersCompleted == 0 { throw Failure.truncated }
    }
}
