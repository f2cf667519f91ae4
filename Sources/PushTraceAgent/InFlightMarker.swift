import Foundation
import PushTraceRecords

/// A small file per launch that says "this launch is handling notification X": written when an extension starts on
/// a notification, emptied when it finishes. One that is not empty at the next launch of that extension means the
/// previous launch ended in the middle (iOS killed it over its memory limit, or it crashed): the next launch records
/// the `*.abnormal_exit` for that notification. The file stays open and is rewritten in place (one `pwrite`), so
/// marking costs a few microseconds, not a file creation.
struct InFlightMarker: Codable {
    var notificationID: String
    /// The process's memory footprint when the marker was last written.
    var footprintBytes: Int64?
    var since: Int64
    /// The launch that wrote it (taken from the file name).
    var launch = ""

    enum CodingKeys: String, CodingKey {
        case notificationID = "notification_id", footprintBytes = "footprint_bytes", since
    }

    static func url(process: ProcessKind, launch: String, in container: AgentContainer) -> URL {
        container.state.appendingPathComponent("inflight-\(process.rawValue)-\(launch).json")
    }

    /// The markers other launches of `process` left (empty ones are finished work), removed as they are read.
    static func left(by process: ProcessKind, in container: AgentContainer, except launch: String) -> [InFlightMarker] {
        let prefix = "inflight-\(process.rawValue)-"
        return container.files(in: container.state).compactMap { name -> InFlightMarker? in
            guard name.hasPrefix(prefix), name != "\(prefix)\(launch).json" else { return nil }
            let url = container.state.appendingPathComponent(name)
            defer { try? FileManager.default.removeItem(at: url) }
            guard let data = try? Data(contentsOf: url), !data.isEmpty else { return nil }
            var marker = try? JSONDecoder().decode(InFlightMarker.self, from: data)
            marker?.launch = String(name.dropFirst(prefix.count).dropLast(".json".count))
            return marker
        }
    }
}

extension Recorder {
    /// Marks this launch as working on `notificationID` (or refreshes the footprint it last had).
    func beginWork(on notificationID: String) {
        let line = JSONLine(["notification_id": .string(notificationID), "footprint_bytes": MemoryFootprint.current().map(JSONValue.int),
                             "since": .int(clock())])
        marker.rewrite(line.bytes)
    }

    /// This launch finished its work on a notification.
    func endWork() {
        marker.rewrite([])
    }

    func recordAbnormalExit(_ marker: InFlightMarker) {
        guard process == .service || process == .content else { return }
        let name: EventName = process == .content ? .contentAbnormalExit : .serviceAbnormalExit
        event(name, notificationID: marker.notificationID, [
            "last_footprint_bytes": marker.footprintBytes.map(JSONValue.int),
            "previous_launch": .string(marker.launch), "in_flight_since": .int(marker.since),
        ])
    }
}
