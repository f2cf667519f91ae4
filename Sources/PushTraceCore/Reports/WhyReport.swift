import Foundation
import PushTraceRecords

/// The answer to `pushtrace why`: the diagnosis and the timeline it rests on, as JSON (docs/spec.md §7) or text.
public struct WhyReport: Sendable {
    public var appID: String
    public var notificationID: String
    public var diagnosis: Diagnosis
    /// The notification's events in time order, device steps never before `push.sent` (docs/protocol.md#clocks).
    public var timeline: [TimelineEntry]
    /// Set when only part of the notification's stored records were read.
    public var timelineCut: TimelineCut?

    public init(input: DiagnosisInput, diagnosis: Diagnosis) {
        self.appID = input.appID
        self.notificationID = input.notificationID
        self.diagnosis = diagnosis
        self.timeline = Self.displayed(input.entries)
        self.timelineCut = input.timelineCut
    }

    /// Holds device steps back to `push.sent` when a residual clock error would put them before it;
    /// the writer's own time stays in `deviceTs`.
    static func displayed(_ entries: [TimelineEntry]) -> [TimelineEntry] {
        guard let sent = entries.first(where: { $0.event == .pushSent })?.ts else { return entries }
        return entries.map { entry in
            guard entry.process != .server, entry.ts < sent else { return entry }
            var held = entry
            held.deviceTs = entry.deviceTs ?? entry.ts
            held.ts = sent
            return held
        }.sorted { ($0.ts, $0.process == .server ? 0 : 1) < ($1.ts, $1.process == .server ? 0 : 1) }
    }

    /// The JSON document of docs/spec.md §7.
    public var jsonValue: JSONValue {
        var document: [String: JSONValue] = [
            "notification_id": .string(notificationID),
            "app_id": appID.isEmpty ? .null : .string(appID),
            "cause": .string(diagnosis.cause.rawValue),
            "findings": .array(
                diagnosis.findings.map { finding in
                    var object: [String: JSONValue] = [
                        "code": .string(finding.code.rawValue),
                        "message": .string(finding.message),
                        "evidence": .array(finding.evidence.map(\.jsonValue)),
                        "fix": .string(finding.fix),
                    ]
                    if let related = finding.related { object["related_notification_id"] = .string(related) }
                    return .object(object)
                }),
            "timeline": .array(timeline.map(\.jsonValue)),
        ]
        if let cut = timelineCut {
            document["timeline_cut"] = .object([
                "blocks_read": .int(Int64(cut.blocksRead)), "through": cut.through.map(JSONValue.int) ?? .null,
                "message": .string(cut.message),
            ])
        }
        return .object(document)
    }
}

extension TimelineEntry {
    /// Every field of the stored line, with `ts` the corrected time and `device_ts` the writer's own when it differs.
    public var jsonValue: JSONValue {
        var line = json
        let flat = line.withUTF8 { JSONValue(scanningFlatObject: UnsafeRawBufferPointer($0)) }
        var fields = flat?.objectValue ?? (try? JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8))) ?? [:]
        fields["ts"] = .int(outOfRangeTs ?? ts)
        if let deviceTs { fields["device_ts"] = .int(outOfRangeDeviceTs ?? deviceTs) }
        // Stored by a release that did not bound times: the exact values above, flagged for whoever reads them.
        let outOfRange = [outOfRangeTs.map { _ in "ts" }, outOfRangeDeviceTs.map { _ in "device_ts" }].compactMap { $0 }
        if !outOfRange.isEmpty { fields["out_of_range"] = .array(outOfRange.map(JSONValue.string)) }
        return .object(fields)
    }

    /// The fields beyond the envelope, as `key=value` pairs sorted by key, for one-line display.
    public var detail: String {
        guard case .object(let fields) = jsonValue else { return "" }
        let envelope: Set<String> = ["type", "ts", "device_ts", "process", "event", "notification_id", "out_of_range"]
        return fields.keys.sorted().filter { !envelope.contains($0) }.map { "\($0)=\(fields[$0]!.compactText)" }
            .joined(separator: " ")
    }
}

extension JSONValue {
    /// The value as compact JSON, strings unquoted when they have no spaces.
    public var compactText: String {
        switch self {
        case .string(let s): return s.contains(" ") || s.isEmpty ? "\"\(s)\"" : s
        default: return sortedJSONText(pretty: false)
        }
    }

    /// The value as a JSON document (pretty-printed, keys sorted).
    public func jsonText(pretty: Bool = true) -> String { sortedJSONText(pretty: pretty) }
}
