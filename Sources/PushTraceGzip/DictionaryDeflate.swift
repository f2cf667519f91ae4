import CZlib

/// One-shot zlib streams (RFC 1950) compressed against a preset dictionary: the store's record blocks.
///
/// A block holds a few hundred short JSON lines that repeat the same keys and values; a dictionary of typical lines
/// gives deflate something to refer back to from a block's first byte. The zlib header names the dictionary by its
/// Adler-32, so a block read with the wrong dictionary fails instead of decoding to garbage, and the trailer's
/// checksum catches a damaged block.
public enum DictionaryDeflate {
    /// Why a block could not be decompressed.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not a zlib stream, damaged, or compressed against another dictionary.
        case corrupt(String)
        /// The stream decodes to more than the size it was declared with.
        case tooLarge(limit: Int)
        /// The stream ends before its end marker.
        case truncated

        public var description: String {
            switch self {
            case .corrupt(let why): return "corrupt block: \(why)"
            case .tooLarge(let limit): return "block decodes to more than its declared \(limit) bytes"
            case .truncated: return "block ends before its end marker"
            }
        }
    }

    /// The Adler-32 of `dictionary`: what a zlib header compressed against it names.
    public static func identifier(of dictionary: [UInt8]) -> UInt32 {
        dictionary.withUnsafeBufferPointer { UInt32(adler32(1, $0.baseAddress, UInt32($0.count))) }
    }

    /// `input` as one zlib stream at `level`, against `dictionary` (none when empty).
    public static func compress(_ input: UnsafeRawBufferPointer, dictionary: [UInt8], level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        let status = deflateInit2_(&stream, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "deflateInit2 failed with \(status): zlib is broken")
        defer { deflateEnd(&stream) }
        if !dictionary.isEmpty {
            let set = dictionary.withUnsafeBufferPointer { deflateSetDictionary(&stream, $0.baseAddress, UInt32($0.count)) }
            precondition(set == Z_OK, "deflateSetDictionary failed with \(set)")
        }
        let bound = Int(deflateBound(&stream, UInt(input.count)))
        return [UInt8](unsafeUninitializedCapacity: bound) { output, count in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
            stream.avail_in = UInt32(input.count)
            stream.next_out = output.baseAddress
            stream.avail_out = UInt32(bound)
            let done = deflate(&stream, Z_FINISH)
            precondition(done == Z_STREAM_END, "deflate into its own bound ended with \(done)")
            count = bound - Int(stream.avail_out)
        }
    }

    /// The bytes of the zlib stream `input`, which must decode to at most `limit` bytes, reading the dictionary
    /// its header names through `dictionary` (called with that Adler-32; nil when no such dictionary is known).
    /// Output grows as it is decoded, so a damaged `limit` cannot make it allocate more than the stream holds.
    public static func decompress(_ input: UnsafeRawBufferPointer, limit: Int,
                                  dictionary: (UInt32) -> [UInt8]?) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt("zlib could not start")
        }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.avail_in = UInt32(clamping: input.count)
        var output: [UInt8] = []
        output.reserveCapacity(min(max(0, limit), 1 << 20))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var status: Int32 = Z_OK
            let produced = chunk.withUnsafeMutableBufferPointer { buffer -> Int in
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(buffer.count)
                status = inflate(&stream, Z_NO_FLUSH)
                return buffer.count - Int(stream.avail_out)
            }
            output.append(contentsOf: chunk[0..<produced])
            if output.count > limit { throw .tooLarge(limit: limit) }
            switch status {
            case Z_STREAM_END:
                if stream.avail_in != 0 { throw .corrupt("\(stream.avail_in) bytes after the end of the stream") }
                return output
            case Z_NEED_DICT:
                guard let bytes = dictionary(UInt32(stream.adler)) else {
                    throw .corrupt("compressed against an unknown dictionary \(UInt32(stream.adler))")
                }
                let set = bytes.withUnsafeBufferPointer { inflateSetDictionary(&stream, $0.baseAddress, UInt32($0.count)) }
                guard set == Z_OK else { throw .corrupt("the dictionary does not match") }
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                // No progress possible: the input ended before the stream did.
                if produced == 0 { throw .truncated }
            default:
                throw .corrupt(stream.msg.map { String(cString: $0) } ?? "zlib status \(status)")
            }
        }
    }
}
