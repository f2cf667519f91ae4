import CZlib

/// One-shot zlib streams (RFC 1950) compressed against a preset dictionary: the store's record blocks.
///
/// A block holds a few hundred short JSON lines that repeat the same keys and values; a dictionary of typical lines
/// gives deflate something to refer back to from a block's first byte. The zlib header names the dictionary by its
/// Adler-32, and the trailer's checksum catches a damaged block, or one read with another dictionary.
///
/// The header and trailer are written and checked here, around a raw deflate stream: zlib would hash the whole
/// dictionary again for every block it compresses, and checksum it for every block it reads. A ``PrimedDeflater``
/// hashes it once and copies that state for each block.
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
        PrimedDeflater(dictionary: dictionary, level: level).compress(input)
    }

    /// The bytes of the zlib stream `input`, which must decode to at most `limit` bytes, reading the dictionary
    /// its header names through `dictionary` (called with that Adler-32; nil when no such dictionary is known).
    /// Output grows as it is decoded, so a damaged `limit` cannot make it allocate more than the stream holds.
    public static func decompress(
        _ input: UnsafeRawBufferPointer, limit: Int,
        dictionary: (UInt32) -> [UInt8]?
    ) throws(Failure) -> [UInt8] {
        guard input.count >= 2 else { throw .truncated }
        let cmf = input[0], flg = input[1]
        guard cmf & 0x0f == 8, cmf >> 4 <= 7, (UInt32(cmf) << 8 | UInt32(flg)) % 31 == 0 else {
            throw .corrupt("not a zlib stream")
        }
        var start = 2
        var preset: [UInt8] = []
        if flg & 0x20 != 0 {
            guard input.count >= 6 else { throw .truncated }
            let id = input[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard let bytes = dictionary(id) else { throw .corrupt("compressed against an unknown dictionary \(id)") }
            preset = bytes
            start = 6
        }
        // On the heap: zlib's state points back at its stream, which must not move between calls.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard inflateInit2_(stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt("zlib could not start")
        }
        defer { inflateEnd(stream) }
        if !preset.isEmpty {
            let set = preset.withUnsafeBufferPointer { inflateSetDictionary(stream, $0.baseAddress, UInt32($0.count)) }
            guard set == Z_OK else { throw .corrupt("the dictionary could not be set") }
        }
        let body = UnsafeRawBufferPointer(rebasing: input[start...])
        stream.pointee.next_in = UnsafeMutablePointer(mutating: body.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(clamping: body.count)
        // Decoded straight into a buffer of room for one byte past `limit` (to see a stream that holds more), or,
        // when `limit` is only a bound, a guess that grows. Deflate expands at most 1032-fold, so a damaged `limit`
        // cannot make this allocate more than the stream could hold.
        let (expandable, overflow) = body.count.multipliedReportingOverflow(by: 1032)
        let bound = min(max(0, limit), overflow ? Int.max - 1 : expandable) + 1
        // A `limit` of a MiB or less is taken as the size expected (a block's); a larger one as a bound only.
        var capacity = limit < 1 << 20 ? bound : min(bound, max(4096, body.count &* 4))
        var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var produced = 0
        var status: Int32 = Z_OK
        while true {
            // zlib counts room in 32 bits: what it is given is added to `produced` once it has written into it.
            let room = min(capacity - produced, Int(UInt32.max))
            stream.pointee.next_out = buffer + produced
            stream.pointee.avail_out = UInt32(room)
            repeat {
                status = inflate(stream, Z_NO_FLUSH)
            } while status == Z_OK && stream.pointee.avail_out > 0 && stream.pointee.avail_in > 0
            produced += room - Int(stream.pointee.avail_out)
            guard status == Z_OK || status == Z_BUF_ERROR, stream.pointee.avail_out == 0 else { break }
            if produced < capacity { continue }
            guard capacity < bound else { break }
            let grown = capacity > bound / 4 ? bound : capacity * 4
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            larger.update(from: buffer, count: produced)
            buffer.deallocate()
            buffer = larger
            capacity = grown
        }
        let output = Array(UnsafeBufferPointer(start: buffer, count: produced))
        switch status {
        case Z_STREAM_END:
            if output.count > limit { throw .tooLarge(limit: limit) }
            // The trailer: the Adler-32 of what was compressed, and nothing after it.
            let left = Int(stream.pointee.avail_in)
            guard left >= 4 else { throw .truncated }
            guard left == 4 else { throw .corrupt("\(left - 4) bytes after the end of the stream") }
            let trailer = body[(body.count - 4)...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let checksum = output.withUnsafeBufferPointer { UInt32(adler32(1, $0.baseAddress, UInt32($0.count))) }
            guard trailer == checksum else {
                throw .corrupt(preset.isEmpty ? "checksum mismatch" : "checksum mismatch (damaged, or another dictionary)")
            }
            return output
        case Z_OK, Z_BUF_ERROR:
            // Out of room (more than `limit`), or the input ended before the stream did.
            if produced == capacity { throw .tooLarge(limit: limit) }
            throw .truncated
        default:
            throw .corrupt(stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)")
        }
    }
}

/// A deflate state primed with one dictionary, copied for each block it compresses: the dictionary is hashed once,
/// not once per block. The state is made at the first block, so a deflater that compresses nothing costs nothing.
/// Not for concurrent use.
public final class PrimedDeflater {
    private let dictionary: [UInt8]
    private let level: Int32
    /// On the heap: zlib's state points back at its stream, which must not move. Nil until the first block.
    private var primed: UnsafeMutablePointer<z_stream>?
    /// CMF, FLG and, with a dictionary, its Adler-32 (RFC 1950).
    private let header: [UInt8]

    /// A deflater at `level` (0–9) primed with `dictionary` (none when empty).
    public init(dictionary: [UInt8], level: Int32 = 6) {
        self.dictionary = dictionary
        self.level = level
        let cmf: UInt8 = 0x78  // deflate, 32 KiB window
        let levelBits: UInt8 = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3
        var flg = levelBits << 6 | (dictionary.isEmpty ? 0 : 0x20)
        flg |= UInt8(31 - (UInt32(cmf) << 8 | UInt32(flg)) % 31) % 31
        var header = [cmf, flg]
        if !dictionary.isEmpty {
            let id = DictionaryDeflate.identifier(of: dictionary)
            header += [UInt8(id >> 24), UInt8(id >> 16 & 0xff), UInt8(id >> 8 & 0xff), UInt8(id & 0xff)]
        }
        self.header = header
    }

    deinit {
        if let primed {
            deflateEnd(primed)
            primed.deallocate()
        }
    }

    /// The primed state, made on first use.
    private func primedState() -> UnsafeMutablePointer<z_stream> {
        if let primed { return primed }
        let state = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        state.initialize(to: z_stream())
        let status = deflateInit2_(
            state, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "deflateInit2 failed with \(status): zlib is broken")
        if !dictionary.isEmpty {
            let set = dictionary.withUnsafeBufferPointer { deflateSetDictionary(state, $0.baseAddress, UInt32($0.count)) }
            precondition(set == Z_OK, "deflateSetDictionary failed with \(set)")
        }
        primed = state
        return state
    }

    /// `input` as one zlib stream against the dictionary.
    public func compress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        let work = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        work.initialize(to: z_stream())
        let copied = deflateCopy(work, primedState())
        precondition(copied == Z_OK, "deflateCopy failed with \(copied)")
        defer {
            deflateEnd(work)
            work.deallocate()
        }
        let bound = Int(deflateBound(work, UInt(input.count)))
        var output = header
        let body = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            work.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
            work.pointee.avail_in = UInt32(input.count)
            work.pointee.next_out = buffer.baseAddress
            work.pointee.avail_out = UInt32(bound)
            let done = deflate(work, Z_FINISH)
            precondition(done == Z_STREAM_END, "deflate into its own bound ended with \(done)")
            count = bound - Int(work.pointee.avail_out)
        }
        output += body
        let checksum = UInt32(adler32(1, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(input.count)))
        output += [UInt8(checksum >> 24), UInt8(checksum >> 16 & 0xff), UInt8(checksum >> 8 & 0xff), UInt8(checksum & 0xff)]
        return output
    }
}
