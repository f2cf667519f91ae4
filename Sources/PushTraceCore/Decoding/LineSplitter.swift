/// Cuts a byte stream into lines at `\n` (dropping a `\r` before it), holding at most one line in memory.
///
/// A line longer than the limit is reported as `.overLong` with its first bytes, and the rest of it is skipped.
struct LineSplitter {
    enum Piece {
        case line(ArraySlice<UInt8>)
        case overLong(prefix: [UInt8], length: Int)
    }

    private let maxLineBytes: Int
    private let keptBytes: Int
    private var pending: [UInt8] = []
    /// While skipping the rest of an over-long line: its length so far and its kept prefix.
    private var skipping: (length: Int, prefix: [UInt8])?

    init(limits: BundleLimits) {
        self.maxLineBytes = limits.maxLineBytes
        self.keptBytes = limits.keptBytesOfLongLine
    }

    mutating func consume(_ bytes: UnsafeRawBufferPointer, _ emit: (Piece) throws -> Void) rethrows {
        var start = 0
        while start < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
            let newline = rest.firstIndex(of: UInt8(ascii: "\n"))
            let end = newline.map { start + ($0 - rest.startIndex) } ?? bytes.count
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if var skip = skipping {
                skip.length += chunk.count
                skipping = skip
            } else if pending.count + chunk.count > maxLineBytes {
                var prefix = pending
                prefix.append(contentsOf: chunk.prefix(max(0, keptBytes - prefix.count)))
                skipping = (pending.count + chunk.count, Array(prefix.prefix(keptBytes)))
                pending.removeAll(keepingCapacity: true)
            } else if newline != nil && pending.isEmpty {
                // The common case: a whole line inside one chunk, handed on without a copy into `pending`.
                try emit(.line(Self.trimmed(ArraySlice(chunk))))
                start = end + 1
                continue
            } else {
                pending.append(contentsOf: chunk)
            }
            if newline != nil {
                try flushLine(emit)
                start = end + 1
            } else {
                start = end
            }
        }
    }

    /// Emits the last line when the stream did not end with a newline.
    mutating func finish(_ emit: (Piece) throws -> Void) rethrows {
        if skipping != nil || !pending.isEmpty { try flushLine(emit) }
    }

    private mutating func flushLine(_ emit: (Piece) throws -> Void) rethrows {
        if let skip = skipping {
            skipping = nil
            try emit(.overLong(prefix: skip.prefix, length: skip.length))
        } else {
            try emit(.line(Self.trimmed(pending[...])))
            pending.removeAll(keepingCapacity: true)
        }
    }

    private static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == UInt8(ascii: "\r") ? line.dropLast() : line
    }
}
