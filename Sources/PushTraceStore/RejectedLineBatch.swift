import PushTraceCore

/// A bundle's rejected lines as they will be stored: kept in memory until the bundle ends, then written in one batch,
/// and only up to a bound. Past it they are counted (the bundle's `rejected` counts every one) but not kept, so a
/// bundle of a million one-byte bad lines costs one bounded write rather than a million.
public struct RejectedLineBatch: Sendable {
    /// The most rejected lines kept per bundle.
    public static let lineLimit = 1_000
    /// The most bytes of rejected lines kept per bundle.
    public static let byteLimit = 1 << 20

    /// The lines to store, in the order they were rejected.
    public private(set) var lines: [RejectedLine] = []
    /// Rejected lines over the bound: counted, not stored.
    public private(set) var dropped = 0
    private var bytes = 0

    public init() {}

    /// Keeps `line` if the bounds allow; counts it otherwise.
    public mutating func add(_ line: RejectedLine) {
        guard line != .counted, lines.count < Self.lineLimit, bytes + line.raw.count <= Self.byteLimit else {
            dropped += 1
            return
        }
        bytes += line.raw.count
        lines.append(line)
    }

}

extension RejectedLine {
    /// A rejected line past those a bundle stores, known only to have been rejected: a reader that keeps
    /// ``RejectedLineBatch/lineLimit`` lines in full passes the rest as this, to be counted.
    public static let counted = RejectedLine(line: 0, raw: [], reason: "")
}
