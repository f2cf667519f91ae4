/// Times as the console writes them, in UTC: `2026-11-23 08:30:05` for people and `2026-11-23T08:30:05Z` in links
/// and forms (which `since=` and `until=` read back). Computed, not formatted by Foundation: a search page writes
/// fifty of them.
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

    /// Days to a civil date (Howard Hinnant's algorithm), and the time of day.
    private static func parts(_ ms: Int64) -> (String, String) {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return (
            "\(year)-\(two(month))-\(two(day))",
            "\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))"
        )
    }
}
