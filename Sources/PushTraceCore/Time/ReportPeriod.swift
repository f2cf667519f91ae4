import Foundation

/// A half-open span of UTC days a report covers: an ISO week (`2026-W46`) or a range of dates.
public struct ReportPeriod: Codable, Sendable, Hashable {
    /// `2026-W46`, or `2026-11-01..2026-11-14` for a date range.
    public var label: String
    /// The first instant, epoch milliseconds (a UTC midnight).
    public var start: Int64
    /// The first instant after the period.
    public var end: Int64

    static let dayMs: Int64 = 86_400_000
    /// Monday 1970-01-05, the first Monday of the epoch.
    private static let firstMondayDay: Int64 = 4

    /// The ISO week `text` (`YYYY-Www`, digits only, a year from 2000 to 2199 as stored times are), or nil when it
    /// is not one.
    public init?(isoWeek text: String) {
        let parts = text.uppercased().split(separator: "-W", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
            let year = Int(parts[0]), (2000...2199).contains(year),
            let week = Int(parts[1]), week >= 1, week <= Self.weeks(inISOYear: year)
        else { return nil }
        let start = Self.mondayOfWeekOne(year) + Int64(week - 1) * 7
        self.init(label: String(format: "%04d-W%02d", year, week), start: start * Self.dayMs, end: (start + 7) * Self.dayMs)
    }

    /// The days `from` through `to`, both included (`YYYY-MM-DD`), or nil when either is not a date or `to`
    /// comes before `from`.
    public init?(from: String, to: String) {
        guard let first = Self.day(from), let last = Self.day(to), last >= first else { return nil }
        self.init(label: "\(from)..\(to)", start: first * Self.dayMs, end: (last + 1) * Self.dayMs)
    }

    /// The ISO week that contains the instant `ms`.
    public init(weekContaining ms: Int64) {
        let day = Int64((Double(ms) / Double(Self.dayMs)).rounded(.down))
        let monday = day - ((day - Self.firstMondayDay) % 7 + 7) % 7
        let thursday = monday + 3
        let year = Self.civil(thursday).year
        let week = Int((monday - Self.mondayOfWeekOne(year)) / 7) + 1
        self.init(label: String(format: "%04d-W%02d", year, week), start: monday * Self.dayMs, end: (monday + 7) * Self.dayMs)
    }

    public init(label: String, start: Int64, end: Int64) {
        self.label = label
        self.start = start
        self.end = end
    }

    /// The period of the same length just before this one (the previous ISO week for a week).
    public var previous: ReportPeriod {
        let length = end - start
        if label.contains("-W") { return ReportPeriod(weekContaining: start - 1) }
        return ReportPeriod(
            label: "\(Self.dateText(start - length))..\(Self.dateText(start - Self.dayMs))",
            start: start - length, end: start)
    }

    /// The UTC days of the period, as day numbers since the epoch.
    public var days: Range<Int64> { start / Self.dayMs..<end / Self.dayMs }

    /// `2026-11-09` for a day number since the epoch.
    public static func dateText(day: Int64) -> String {
        let date = civil(day)
        return String(format: "%04d-%02d-%02d", date.year, date.month, date.day)
    }

    /// `2026-11-09` for an instant.
    public static func dateText(_ ms: Int64) -> String {
        dateText(day: Int64((Double(ms) / Double(dayMs)).rounded(.down)))
    }

    private static func day(_ text: String) -> Int64? {
        let parts = text.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        return daysFromCivil(year: year, month: month, day: day)
    }

    private static func mondayOfWeekOne(_ year: Int) -> Int64 {
        // Week 1 is the week with the year's first Thursday, so it holds January 4th.
        let jan4 = daysFromCivil(year: year, month: 1, day: 4)
        return jan4 - ((jan4 - firstMondayDay) % 7 + 7) % 7
    }

    private static func weeks(inISOYear year: Int) -> Int {
        Int((mondayOfWeekOne(year + 1) - mondayOfWeekOne(year)) / 7)
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int, year: Int) -> Int {
        [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    // Howard Hinnant's days-from-civil and civil-from-days: the proleptic Gregorian calendar without Foundation's
    // time zones.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month), d = Int64(day)
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (Int(yoe + era * 400) + (month <= 2 ? 1 : 0), month, day)
    }
}
