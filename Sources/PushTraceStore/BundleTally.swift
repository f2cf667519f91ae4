import PushTraceCore
import PushTraceRecords

/// What a bundle writer counts of one bundle's items as it stores them, the same in every engine: its accepted and
/// rejected lines, each line's corrected time, the spans of those times, the device's first and last time, and the
/// facts per notification that the summaries are merged from.
package struct BundleTally {
    package let manifest: Manifest
    package let receivedAt: Int64
    /// The bundle's clock offset (docs/protocol.md#clocks): what its lines' times are corrected by.
    package let offset: Int64
    package private(set) var accepted = 0
    package private(set) var rejected = 0
    /// The first rejections, for the answer (``IngestResult/listedRejections`` at most).
    package private(set) var rejections: [IngestResult.Rejection] = []
    /// The bundle's facts per notification ID.
    package private(set) var facts: [String: NotificationFacts] = [:]
    /// The device's earliest and latest corrected times in the bundle (a device's bundle only).
    package private(set) var deviceFirstSeen: Int64?
    package private(set) var deviceLastSeen: Int64?
    /// The corrected times of the accepted lines: config lines apart from the others.
    private var lineTimes = BundleTimeSpan.Builder()
    private var configTimes = BundleTimeSpan.Builder()

    package init(manifest: Manifest, receivedAt: Int64) {
        self.manifest = manifest
        self.receivedAt = receivedAt
        offset = ClockCorrection.offset(receivedAt: receivedAt, uploadedAt: manifest.uploadedAt)
    }

    /// The uploading device; nil for the backend's bundles.
    package var deviceID: String? { manifest.isFromServer ? nil : manifest.deviceID }

    package mutating func reject(_ line: RejectedLine) {
        rejected += 1
        if rejections.count < IngestResult.listedRejections {
            rejections.append(.init(line: line.line, reason: line.reason))
        }
    }

    /// Counts an accepted record; returns its corrected time and, when the correction changed it, the device's own.
    package mutating func accept(_ decoded: DecodedRecord) -> (ts: Int64?, deviceTs: Int64?) {
        let record = decoded.record
        let ts = record.ts.map { ClockCorrection.corrected($0, by: offset) }
        accepted += 1
        if let ts {
            if record.recordType == .config { configTimes.add(ts) } else { lineTimes.add(ts) }
            if deviceID != nil {
                deviceLastSeen = max(deviceLastSeen ?? ts, ts)
                deviceFirstSeen = min(deviceFirstSeen ?? ts, ts)
            }
        }
        if let id = decoded.notificationID {
            facts[id, default: NotificationFacts()].add(record, ts: ts, manifest: manifest)
        }
        return (ts, offset != 0 ? record.ts : nil)
    }

    /// The hours the lines span (``BundleTimeSpan``), as the bundle row keeps them: `configTo` is nil when the
    /// config lines span one hour.
    package var spans: (lines: BundleTimeSpan?, configFrom: Int64?, configTo: Int64?) {
        let configs = configTimes.span(receivedAt: receivedAt, stretched: false)
        return (
            lineTimes.span(receivedAt: receivedAt, stretched: true), configs?.from,
            configs.flatMap { $0.to == $0.from ? nil : $0.to }
        )
    }

    /// The answer for the stored bundle.
    package var result: IngestResult {
        IngestResult(
            appID: manifest.appID!, bundleID: manifest.bundleID!, accepted: accepted, rejected: rejected,
            duplicate: false, rejections: rejections, clockOffsetMs: offset)
    }
}
