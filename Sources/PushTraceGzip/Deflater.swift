import CZlib

/// Streaming gzip compression over the system zlib: each `Deflater` writes one gzip member.
public final class Deflater {
    private var stream = z_stream()
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    /// Starts a gzip member at `level` (0–9; zlib's default is 6).
    public init(level: Int32 = 6) {
        let status = deflateInit2_(
            &stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "deflateInit2 failed with \(status): zlib is broken")
    }

    deinit { deflateEnd(&stream) }

    /// Compresses `input`, handing compressed output to `sink` as it is produced.
    public func consume(_ input: UnsafeRawBufferPointer, _ sink: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try run(input, flush: Z_NO_FLUSH, sink)
    }

    /// Ends the member (writes the gzip trailer).
    public func finish(_ sink: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, sink)
    }

    private func run(
        _ input: UnsafeRawBufferPointer, flush: Int32,
        _ sink: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.avail_in = UInt32(input.count)
        var status: Int32 = Z_OK
        repeat {
            let produced = output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                status = deflate(&stream, flush)
                return out.count - Int(stream.avail_out)
            }
            if produced > 0 {
                try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
            }
        } while stream.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END)
    }

    /// Compresses `bytes` into one complete gzip member.
    public static func gzip(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var result: [UInt8] = []
        let deflater = Deflater(level: level)
        bytes.withUnsafeBytes { input in deflater.consume(input) { result.append(contentsOf: $0) } }
        deflater.finish { result.append(contentsOf: $0) }
        return result
    }
}
