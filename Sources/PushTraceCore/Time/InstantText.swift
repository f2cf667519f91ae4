import Foundation
import PushTraceRecords

/// Instants as people type them (`2026-11-10`, `2026-11-10T08:30:00Z`, `2026-11-10T08:30:00.250Z`, epoch
/// milliseconds) and as pushtrace prints them (UTC).
public enum InstantText {
    /// Epoch milliseconds, or nil when `text` is none of the accepted forms or lies outside
    /// ``WireBounds/epochMilliseconds`` (which ``rangeHint`` says).
    public static func parse(_ text: String) -> Int64? {
        guard text.utf8.count <= 64 else { return nil }
        if let ms = Int64(text) { return WireBounds.epochMilliseconds.contains(ms) ? ms : nil }
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for formatter in [full, fractional, day] {
            if let date = formatter.date(from: text) {
                let ms = (date.timeIntervalSince1970 * 1000).rounded()
                let bounds = WireBounds.epochMilliseconds
                return ms >= Double(bounds.lowerBound) && ms <= Double(bounds.upperBound) ? Int64(ms) : nil
            }
        }
        return nil
    }

    /// What an error about an instant says: the forms it may take, and its range.
    public static let rangeHint = "use epoch milliseconds, 2026-11-10 or 2026-11-10T08:30:00Z, from 2000-01-01 to 2199-12-31"

    /// `2026-11-10 08:30:00` (UTC), or `-` for nil.
    public static func format(_ ms: Int64?) -> String {
        guard let ms else { return "-" }
        // Stored unchecked by a release before times were bounded: said, not turned into a year 5,000,000 date.
        guard WireBounds.epochMilliseconds.contains(ms) else { return "out of range (\(ms))" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [
            .withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate,
            .withSpaceBetweenDateAndTime,
        ]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
