import PushTraceGzip
import PushTraceRecords

/// Decodes a bundle (docs/protocol.md#bundles) as its bytes arrive: decompression, line splitting, the manifest, and each record.
///
/// Memory stays bounded by the compression window and the longest line, whatever the bundle's size. A whole-bundle
/// failure is thrown as ``BundleError``; a bad record line is handed on as ``BundleItem/rejected(_:)`` and decoding goes on.
///
/// ```swift
/// let decoder = try BundleDecoder(encoding: .sniff)
/// try decoder.consume(chunk) { item in … }   // as often as bytes arrive
/// try decoder.finish { item in … }
/// ```
public final class BundleDecoder {
    public let limits: BundleLimits
    private var encoding: ContentEncoding
    private var inflater: Inflater?
    private var splitter: LineSplitter
    private let parser = LineParser()
    private var lineNumber = 0
    private var sawInput = false

    /// The manifest, once line 1 has been read.
    public private(set) var manifest: Manifest?
    /// Bytes after decompression so far.
    public private(set) var decompressedBytes = 0
    /// Bytes as received so far.
    public private(set) var receivedBytes = 0

    public init(encoding: ContentEncoding, limits: BundleLimits = .default) {
        self.encoding = encoding
        self.limits = limits
        self.splitter = LineSplitter(limits: limits)
    }

    /// Feeds the next bytes of the body.
    public func consume(_ bytes: UnsafeRawBufferPointer, _ emit: (BundleItem) throws -> Void) throws {
        guard !bytes.isEmpty else { return }
        receivedBytes += bytes.count
        if !sawInput {
            sawInput = true
            if encoding == .sniff { encoding = bytes[0] == 0x1f ? .gzip : .identity }
            switch encoding {
            case .gzip: inflater = try inflaterOrThrow(.gzip)
            case .deflate: inflater = try inflaterOrThrow(.deflate)
            case .identity, .sniff: break
            }
        }
        if let inflater {
            do {
                try inflater.consume(bytes) { try decompressed($0, emit) }
            } catch let failure as Inflater.Failure {
                throw Self.describe(failure, encoding: encoding)
            }
        } else {
            try decompressed(bytes, emit)
        }
    }

    /// Declares the end of the body: flushes the last line and checks that the body was complete.
    public func finish(_ emit: (BundleItem) throws -> Void) throws {
        guard sawInput else { throw BundleError(.undecodable, "the bundle is empty: its first line must be the manifest") }
        if let inflater {
            do { try inflater.finish() } catch let failure as Inflater.Failure {
                throw Self.describe(failure, encoding: encoding)
            }
        }
        try splitter.finish { try handle($0, emit) }
        if manifest == nil {
            throw BundleError(.undecodable, "the bundle has no manifest: it holds only empty lines")
        }
    }

    private func inflaterOrThrow(_ format: Inflater.Format) throws(BundleError) -> Inflater {
        do { return try Inflater(format: format) } catch {
            throw BundleError(.undecodable, "zlib could not start")
        }
    }

    private func decompressed(_ bytes: UnsafeRawBufferPointer, _ emit: (BundleItem) throws -> Void) throws {
        decompressedBytes += bytes.count
        if decompressedBytes > limits.maxDecompressedBytes {
            throw BundleError(
                .tooLarge,
                "the bundle decompresses to more than \(Self.size(limits.maxDecompressedBytes)), "
                    + "the limit; split it into smaller bundles or raise the limit")
        }
        try splitter.consume(bytes) { try handle($0, emit) }
    }

    private func handle(_ piece: LineSplitter.Piece, _ emit: (BundleItem) throws -> Void) throws {
        lineNumber += 1
        switch piece {
        case .overLong(let prefix, let length):
            let reason =
                "the line is \(length) bytes long, over the \(Self.size(limits.maxLineBytes)) limit "
                + "(its first \(prefix.count) bytes are kept)"
            if manifest == nil { throw BundleError(.tooLarge, line: lineNumber, "the manifest line is too long: " + reason) }
            try emit(.rejected(RejectedLine(line: lineNumber, raw: prefix, reason: reason)))
        case .line(let line):
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
                return  // Empty lines are skipped.
            }
            if manifest == nil {
                let manifest = try parser.manifest(line, number: lineNumber)
                self.manifest = manifest
                try emit(.manifest(manifest))
                return
            }
            switch parser.record(line, number: lineNumber) {
            case .success(let record): try emit(.record(record))
            case .failure(let rejected): try emit(.rejected(rejected))
            }
        }
    }

    private static func describe(_ failure: Inflater.Failure, encoding: ContentEncoding) -> BundleError {
        switch failure {
        case .truncated:
            return BundleError(
                .undecodable,
                "the \(encoding.rawValue) stream ends in the middle of a member: "
                    + "the bundle is truncated (an interrupted upload or copy?)")
        case .corrupt(let why):
            return BundleError(.undecodable, "the body is not valid \(encoding.rawValue) (\(why))")
        }
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0
            ? "\(bytes >> 20) MiB"
            : bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }
}
