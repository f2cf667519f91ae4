import PushTraceCore
import PushTraceRecords

/// One bundle as ``BundleWriter`` stores it: what its items add up to from its manifest on,
/// whether it was stored before, and its rejected lines, written together when it ends.
package struct BundleProgress {
    package var tally: BundleTally?
    /// The answer of the bundle stored before, when it was: the rest of its items are then ignored.
    package var duplicateOf: IngestResult?
    package private(set) var rejectedLines = RejectedLineBatch()

    package init() {}

    package var isDuplicate: Bool { duplicateOf != nil }
    /// The bundle's facts per notification ID, for the group to merge once the bundle is stored.
    package var facts: [String: NotificationFacts] { tally?.facts ?? [:] }

    /// Counts a rejected line and keeps it, within bounds, for the bundle's one batch.
    package mutating func reject(_ line: RejectedLine) {
        tally?.reject(line)
        rejectedLines.add(line)
    }
}

/// A device heard from in a bundle: the corrected times of its first and last lines.
package struct DeviceSeen: Sendable, Hashable {
    package var appID: String
    package var deviceID: String
    package var first: Int64
    package var last: Int64
}
