import PushTraceRecords

/// What a bundle decoder hands on, line by line.
public enum BundleItem: Sendable {
    /// Line 1: the bundle's manifest, validated.
    case manifest(Manifest)
    /// A record that passed validation.
    case record(DecodedRecord)
    /// A line refused on its own, kept raw with the reason; the rest of the bundle goes on.
    case rejected(RejectedLine)
}

/// A valid record and the line it came from.
public struct DecodedRecord: Sendable {
    /// 1-based line number in the decompressed stream.
    public var line: Int
    public var record: Record
    /// The notification ID in its stored form (docs/spec.md §1), when the record has one.
    public var notificationID: String?
    /// The line exactly as received, stored as the record's JSON so that no field is lost.
    public var json: String
}

/// A line refused on its own.
public struct RejectedLine: Error, Sendable, Hashable {
    public var line: Int
    /// The line's bytes (for an over-long line, its first bytes).
    public var raw: [UInt8]
    public var reason: String

    public init(line: Int, raw: [UInt8], reason: String) {
        self.line = line
        self.raw = raw
        self.reason = reason
    }
}
