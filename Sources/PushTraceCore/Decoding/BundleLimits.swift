/// The bounds a bundle must keep; a user can change each.
public struct BundleLimits: Sendable, Hashable {
    /// The most bytes a bundle may decompress to; over it, the whole bundle is refused (64 MiB by default).
    public var maxDecompressedBytes: Int
    /// The longest line; a longer one is rejected on its own (1 MiB by default).
    public var maxLineBytes: Int
    /// How much of a rejected over-long line is kept as evidence.
    public var keptBytesOfLongLine: Int

    public init(maxDecompressedBytes: Int = 64 << 20, maxLineBytes: Int = 1 << 20, keptBytesOfLongLine: Int = 4096) {
        self.maxDecompressedBytes = maxDecompressedBytes
        self.maxLineBytes = maxLineBytes
        self.keptBytesOfLongLine = keptBytesOfLongLine
    }

    public static let `default` = BundleLimits()
}

/// How a bundle's bytes are encoded on the wire (HTTP `Content-Encoding`, or sniffed for a file).
public enum ContentEncoding: String, Sendable, CaseIterable {
    case identity
    case gzip
    case deflate
    /// gzip when the bytes start with gzip's magic number, else plain NDJSON (for files).
    case sniff
}
