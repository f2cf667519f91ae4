import PushTraceCore

/// Times as the console writes them, in UTC: `2026-11-23 08:30:05` for people and `2026-11-23T08:30:05Z` in links
/// and forms (which `since=` and `until=` read back). The date is the reports' own (``ReportPeriod/dateText(day:)``).
enum UTCText {
    static func readable(_ ms: Int64?) -> String {
        guard let ms else { return "–" }
        let (date, time) = parts(ms)
        return date + " " + time
    }

    static func iso(_ ms: Int64) -> String {
        let (date, time) = parts(ms)
        return date + "T" + time + "Z"
    }

    private static func parts(_ ms: Int64) -> (String, String) {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return (
            ReportPeriod.dateText(day: days),
            "\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))"
        )
    }
}
