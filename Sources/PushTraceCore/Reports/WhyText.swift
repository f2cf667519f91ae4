import Foundation
import PushTraceRecords

extension WhyReport {
    /// The readable answer: the cause and its sentence first, then every finding with its fix, then the timeline
    /// with times relative to the first step.
    public var text: String {
        // Every text here may hold what a device sent: escaped, so that it shows instead of acting on a terminal.
        let safe = TerminalText.escaped
        var out = "\(safe(notificationID))  (\(appID.isEmpty ? "no app" : safe(appID)))\n"
        let primary = diagnosis.findings[0]
        out += "cause: \(diagnosis.cause.rawValue)\n"
        out += wrap(safe(primary.message), indent: "  ") + "\n"
        out += wrap("fix: " + safe(primary.fix), indent: "  ") + "\n"
        if diagnosis.findings.count > 1 {
            out += "\nalso found:\n"
            for finding in diagnosis.findings.dropFirst() {
                out += wrap("\(finding.code.rawValue): \(safe(finding.message))", indent: "  - ", hanging: "    ") + "\n"
            }
        }
        if let cut = timelineCut { out += "\n" + wrap(cut.message, indent: "  ", hanging: "  ") + "\n" }
        guard let origin = timeline.first?.ts else { return out }
        out += "\ntimeline (from \(Self.utc(origin)) UTC):\n"
        for entry in timeline {
            let relative = entry.outOfRangeTs == nil ? Self.relative(entry.ts - origin) : "?".leftPadded(to: 10)
            let process = safe(entry.record.process ?? "?").padding(toLength: 8, withPad: " ", startingAt: 0)
            let name = safe(entry.record.event ?? entry.record.type ?? "?")
            var detail = safe(entry.detail)
            if let stored = entry.outOfRangeTs {
                detail += " [time out of range: \(stored), stored unchecked by an earlier release]"
            }
            if let stored = entry.outOfRangeDeviceTs {
                detail += " [device clock out of range: \(stored)]"
            } else if let deviceTs = entry.deviceTs {
                detail += " [device clock \(Self.relative(deviceTs - entry.ts).trimmingCharacters(in: .whitespaces))]"
            }
            out += "  \(relative)  \(process)\(name)\n"
            if !detail.isEmpty { out += wrap(detail, indent: String(repeating: " ", count: 14)) + "\n" }
        }
        return out
    }

    static func relative(_ ms: Int64) -> String {
        let sign = ms < 0 ? "-" : "+"
        let value = abs(ms)
        let text =
            value >= 3_600_000
            ? "\(value / 3_600_000)h\(String(format: "%02d", value % 3_600_000 / 60_000))m"
            : value >= 60_000
                ? "\(value / 60_000)m\(String(format: "%04.1f", Double(value % 60_000) / 1000))s"
                : String(format: "%.3fs", Double(value) / 1000)
        return (sign + text).leftPadded(to: 10)
    }

    static func utc(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [
            .withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate,
            .withFractionalSeconds, .withSpaceBetweenDateAndTime,
        ]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// Wraps `text` at 78 columns.
func wrap(_ text: String, indent: String, hanging: String? = nil, width: Int = 78) -> String {
    var lines: [String] = []
    var current = indent
    for word in text.split(separator: " ") {
        let prefixOnly = current == indent || current == (hanging ?? indent)
        if !prefixOnly && current.count + 1 + word.count > width {
            lines.append(current)
            current = (hanging ?? indent) + word
        } else {
            current += (prefixOnly ? "" : " ") + word
        }
    }
    lines.append(current)
    return lines.joined(separator: "\n")
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
