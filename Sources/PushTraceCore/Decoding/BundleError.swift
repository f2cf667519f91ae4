/// Why a whole bundle was refused. Nothing of a refused bundle is stored.
public struct BundleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure, which the server maps to an HTTP status.
    public enum Kind: String, Sendable {
        /// Not decodable: corrupt or truncated compression, no manifest, a bad manifest (HTTP 400).
        case undecodable
        /// Over a size limit (HTTP 413).
        case tooLarge
        /// An encoding pushtrace does not read (HTTP 415).
        case unsupportedEncoding
    }

    public var kind: Kind
    /// The 1-based line of the decompressed stream, when the failure is tied to one.
    public var line: Int?
    public var message: String

    public init(_ kind: Kind, line: Int? = nil, _ message: String) {
        self.kind = kind
        self.line = line
        self.message = message
    }

    public var description: String {
        line.map { "line \($0): \(message)" } ?? message
    }
}
