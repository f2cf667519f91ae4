import PushTraceCore
import PushTraceRecords

/// One bundle as a writer stores it, the same in every engine: what its items add up to from its manifest on,
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

/// What a bundle writer of any engine does with each item of a bundle, in the order decoded: the dispatch and the
/// counting are the same in every engine (``BundleProgress``), the storing is each engine's.
package protocol BundleItemWriter {
    var progress: BundleProgress { get set }
    /// Stores the bundle's row (or finds it stored before: ``BundleProgress/duplicateOf``).
    mutating func begin(_ manifest: Manifest) throws
    /// Stores an accepted line.
    mutating func store(_ decoded: DecodedRecord) throws
    /// Writes what ends a bundle stored now (not a duplicate): its last block, its rejected lines and counts, and
    /// `device`, the device it came from, with whatever hearing from that device unsettles.
    mutating func end(_ tally: BundleTally, device: DeviceSeen?) throws
}

/// A device heard from in a bundle: the corrected times of its first and last lines.
package struct DeviceSeen: Sendable, Hashable {
    package var appID: String
    package var deviceID: String
    package var first: Int64
    package var last: Int64
}

extension BundleItemWriter {
    /// Hands `item` to ``begin(_:)`` or ``store(_:)``, or counts it rejected.
    package mutating func add(_ item: BundleItem) throws {
        guard !progress.isDuplicate else { return }
        switch item {
        case .manifest(let manifest): try begin(manifest)
        case .record(let decoded): try store(decoded)
        case .rejected(let line): progress.reject(line)
        }
    }

    /// Ends the bundle (``end(_:device:)``) and answers it; a duplicate answers as it was stored before.
    package mutating func finish() throws -> IngestResult {
        guard let tally = progress.tally else { throw BundleError(.undecodable, "the bundle has no manifest") }
        if let duplicateOf = progress.duplicateOf { return duplicateOf }
        var device: DeviceSeen?
        if let deviceID = tally.deviceID, let first = tally.deviceFirstSeen, let last = tally.deviceLastSeen {
            device = DeviceSeen(appID: tally.manifest.appID!, deviceID: deviceID, first: first, last: last)
        }
        try end(tally, device: device)
        return tally.result
    }
}
