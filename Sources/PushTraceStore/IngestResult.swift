/// What storing one bundle did: the answer the CLI prints and the server returns (docs/spec.md §8).
public struct IngestResult: Sendable, Hashable, Codable {
    public var appID: String
    public var bundleID: String
    public var accepted: Int
    public var rejected: Int
    /// The bundle had been stored before: nothing was stored again.
    public var duplicate: Bool
    /// The first rejected lines with their reasons (the first 1,000 are stored, ``RejectedLineBatch``; this is what
    /// is shown).
    public var rejections: [Rejection]
    /// The device clock offset applied to every `ts` of the bundle (docs/protocol.md#clocks), in milliseconds.
    public var clockOffsetMs: Int64

    package init(
        appID: String, bundleID: String, accepted: Int, rejected: Int, duplicate: Bool,
        rejections: [Rejection], clockOffsetMs: Int64
    ) {
        self.appID = appID
        self.bundleID = bundleID
        self.accepted = accepted
        self.rejected = rejected
        self.duplicate = duplicate
        self.rejections = rejections
        self.clockOffsetMs = clockOffsetMs
    }

    /// A rejected line as shown to the uploader.
    public struct Rejection: Sendable, Hashable, Codable {
        public var line: Int
        public var reason: String

        package init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// How many rejections are listed in a result.
    public static let listedRejections = 20
}
