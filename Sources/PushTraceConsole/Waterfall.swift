import Foundation
import PushTraceCore
import PushTraceRecords

/// One notification's timeline drawn as inline SVG: a lane per process (server, service, content, app), a mark per
/// record at its corrected time, and the service extension's run as a span. Its description is the text alternative;
/// the timeline table beside it lists every record.
///
/// Time runs on a logarithmic axis from the first record: a notification's steps come milliseconds apart at first
/// and minutes apart at the end (the user opens it later), and a linear axis would pile the first ones on one spot.
public struct Waterfall: Sendable {
    /// The lanes, top to bottom, in the order a notification travels.
    public static let lanes: [ProcessKind] = [.server, .service, .content, .app]

    public var timeline: [TimelineEntry]

    public init(timeline: [TimelineEntry]) {
        self.timeline = timeline
    }

    /// The lane a record is drawn in: its process, or `other` for one this version does not know.
    public static func lane(of entry: TimelineEntry) -> String {
        entry.process?.rawValue ?? "other"
    }

    public var svg: String {
        guard let origin = timeline.first?.ts, let last = timeline.last?.ts else { return "" }
        let span = Double(max(last - origin, 1))
        // 100 ms is the axis's first unit: steps closer than that to the first record share its spot.
        let scale = log1p(span / 100)
        let left = 90.0
        let width = 600.0
        let laneHeight = 34.0
        let lanes = Self.lanes.map(\.rawValue) + (timeline.contains { $0.process == nil } ? ["other"] : [])
        let height = Double(lanes.count) * laneHeight + 30
        let x = { (ts: Int64) in left + log1p(Double(max(ts - origin, 0)) / 100) / scale * width }
        var counts: [String: Int] = [:]
        for entry in timeline { counts[Self.lane(of: entry), default: 0] += 1 }
        let description =
            "\(timeline.count) records over \(Self.duration(last - origin)): "
            + lanes.map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        var out = """
            <svg class="chart waterfall" id="waterfall" role="img" aria-labelledby="waterfall-title waterfall-desc" \
            viewBox="0 0 720 \(format(height))" width="720" height="\(format(height))" xmlns="http://www.w3.org/2000/svg">\
            <title id="waterfall-title">Timeline by process</title><desc id="waterfall-desc">\(HTMLText.safe(description))</desc>
            """
        for (index, lane) in lanes.enumerated() {
            let y = Double(index) * laneHeight + 20
            out += "<text class=\"lane-label\" x=\"4\" y=\"\(format(y + 4))\">\(lane)</text>"
            out += "<line class=\"axis\" x1=\"\(format(left))\" y1=\"\(format(y))\" x2=\"\(format(left + width))\" y2=\"\(format(y))\"/>"
        }
        // The service extension's run, from received to delivered or expired.
        if let received = timeline.first(where: { $0.event == .serviceReceived })?.ts,
            let ended = timeline.first(where: { $0.event == .serviceDelivered || $0.event == .serviceExpired })?.ts,
            let row = lanes.firstIndex(of: "service")
        {
            let y = Double(row) * laneHeight + 20
            out +=
                "<rect class=\"span\" x=\"\(format(x(received)))\" y=\"\(format(y - 8))\" width=\"\(format(max(x(ended) - x(received), 1)))\" height=\"16\"/>"
        }
        for entry in timeline {
            let lane = Self.lane(of: entry)
            guard let row = lanes.firstIndex(of: lane) else { continue }
            let y = Double(row) * laneHeight + 20
            let name = entry.record.event ?? entry.record.type ?? "?"
            out += "<circle class=\"mark-\(lane)\" cx=\"\(format(x(entry.ts)))\" cy=\"\(format(y))\" r=\"5\">"
            out += "<title>\(HTMLText.safe("+" + Self.duration(entry.ts - origin) + " " + name))</title></circle>"
        }
        let axisY = Double(lanes.count) * laneHeight + 16
        out += "<text x=\"\(format(left))\" y=\"\(format(axisY))\">0</text>"
        for tick: Int64 in [1_000, 10_000, 60_000, 600_000, 3_600_000] where Double(tick) < span * 0.8 {
            let tickX = x(origin + tick)
            out += "<line class=\"axis\" x1=\"\(format(tickX))\" y1=\"14\" x2=\"\(format(tickX))\" y2=\"\(format(axisY - 12))\"/>"
            out += "<text x=\"\(format(tickX))\" y=\"\(format(axisY))\" text-anchor=\"middle\">+\(Self.duration(tick))</text>"
        }
        out += "<text x=\"\(format(left + width))\" y=\"\(format(axisY))\" text-anchor=\"end\">+\(Self.duration(last - origin))</text>"
        return out + "</svg>"
    }

    /// A span of milliseconds as a person reads it: `850 ms`, `4.2 s`, `3 min 5 s`, `2 h 10 min`.
    public static func duration(_ ms: Int64) -> String {
        let value = abs(ms)
        if value < 1_000 { return "\(value) ms" }
        if value < 60_000 { return format(Double(value) / 1000) + " s" }
        if value < 3_600_000 { return "\(value / 60_000) min \(value % 60_000 / 1000) s" }
        return "\(value / 3_600_000) h \(value % 3_600_000 / 60_000) min"
    }
}
