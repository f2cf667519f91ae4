import Foundation

/// Instants as people type them (`2026-11-10`, `2026-11-10T08:30:00Z`, `2026-11-10T08:30:00.250Z`, epoch
/// milliseconds) and as pushtrace prints them (UTC).
public enum InstantText {
    /// Epoch milliseconds, or nil when `text` is none of the accepted forms.
    public static func parse(_ text: String) -> Int64? {
        if let ms = Int64(text) { return ms }
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for formatter in [full, fractional, day] {
            if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        return nil
    }

    /// `2026-11-10 08:30:00` (UTC), or `-` for nil.
    public static func format(_ ms: Int64?) -> String {
        guard let ms else { return "-" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate,
                                   .withSpaceBetweenDateAndTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
