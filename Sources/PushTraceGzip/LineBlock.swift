/// Lines kept as one compressed block: joined by `\n` (a stored line never holds one) and deflated as one zlib
/// stream against a preset dictionary (``DictionaryDeflate``). The store keeps its accepted records this way.
public enum LineBlock {
    /// `lines` joined by `\n`.
    public static func joined(_ lines: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(lines.count) { $0 + $1.utf8.count })
        for (index, line) in lines.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "\n")) }
            bytes.append(contentsOf: line.utf8)
        }
        return bytes
    }

    /// `lines`, joined and compressed at `level` against `dictionary` (none when empty).
    public static func compress(_ lines: [String], dictionary: [UInt8], level: Int32) -> (data: [UInt8], rawBytes: Int) {
        compress(lines, with: PrimedDeflater(dictionary: dictionary, level: level))
    }

    /// `lines`, joined and compressed by `deflater` (primed with the dictionary once for many blocks).
    public static func compress(_ lines: [String], with deflater: PrimedDeflater) -> (data: [UInt8], rawBytes: Int) {
        let raw = joined(lines)
        return (raw.withUnsafeBytes { deflater.compress($0) }, raw.count)
    }

    /// The lines of a block stored as `data`, declared to hold `lines` lines of `rawBytes` bytes, decompressed
    /// against the dictionary its header names (`dictionaries` is asked by Adler-32). Damaged data, a wrong
    /// dictionary, or a size or count other than declared is an error, never a crash or an unbounded allocation.
    public static func decode(
        _ data: [UInt8], lines: Int, rawBytes: Int,
        dictionaries: (UInt32) -> [UInt8]?
    ) throws(LineBlockError) -> [String] {
        guard rawBytes >= 0, lines >= 0 else { throw LineBlockError.declared(lines: lines, bytes: rawBytes) }
        let decoded = data.withUnsafeBytes { input in
            Result { () throws(DictionaryDeflate.Failure) in
                try DictionaryDeflate.decompress(input, limit: rawBytes, dictionary: dictionaries)
            }
        }
        let bytes: [UInt8]
        switch decoded {
        case .success(let output): bytes = output
        case .failure(let failure): throw LineBlockError.compression(failure)
        }
        guard bytes.count == rawBytes else { throw LineBlockError.size(expected: rawBytes, actual: bytes.count) }
        guard lines > 0 else {
            if bytes.isEmpty { return [] }
            throw LineBlockError.lineCount(expected: lines)
        }
        let split = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard split.count == lines else { throw LineBlockError.lineCount(expected: lines) }
        return split.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A stored block that cannot be read back: the file was damaged, or written by something other than pushtrace.
public enum LineBlockError: Error, Equatable, Sendable, CustomStringConvertible {
    case compression(DictionaryDeflate.Failure)
    case declared(lines: Int, bytes: Int)
    case size(expected: Int, actual: Int)
    case lineCount(expected: Int)

    public var description: String {
        switch self {
        case .compression(let failure): return "a stored record block cannot be read: \(failure)"
        case .declared(let lines, let bytes):
            return "a stored record block declares \(lines) lines of \(bytes) bytes, beyond what pushtrace writes"
        case .size(let expected, let actual):
            return "a stored record block decodes to \(actual) bytes, not the \(expected) it was stored with"
        case .lineCount(let expected): return "a stored record block does not hold the \(expected) lines it was stored with"
        }
    }
}
