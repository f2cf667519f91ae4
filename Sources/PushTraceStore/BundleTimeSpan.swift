/// The corrected times a bundle's accepted lines span, kept coarsely beside the bundle (`bundle.ts_from`, `ts_to`,
/// and `config_ts_from`, `config_ts_to` for its config lines): the first and the last hour (UTC) its lines fall in,
/// counted from the hour it was received, so a span always contains every line's time in a few bytes. Small numbers
/// take one byte or none: the span of a bundle's other lines is stretched to end no earlier than the hour it was
/// received, where they usually end (stored as 0, no byte), and its config lines usually share one hour
/// (`config_ts_to` NULL, no byte); a config span is not stretched, as its lines were recorded long before.
package struct BundleTimeSpan: Equatable {
    /// The span's unit, in milliseconds.
    package static let unit: Int64 = 3_600_000

    /// Hours from `receivedAt / unit` (truncated, as SQLite's integer division truncates) to the hour of the
    /// earliest line and to the hour of the latest (with `stretched`, to the received hour if that is later): the
    /// lines lie in [(base + from) × unit, (base + to + 1) × unit).
    package var from: Int64
    package var to: Int64

    package init(receivedAt: Int64, earliest: Int64, latest: Int64, stretched: Bool) {
        let base = receivedAt / Self.unit
        from = Self.floor(earliest) - base
        to = stretched ? max(Self.floor(latest) - base, 0) : Self.floor(latest) - base
    }

    /// The earliest and latest of the times it is given.
    package struct Builder {
        private var earliest: Int64?
        private var latest: Int64?

        package init() {}

        package mutating func add(_ ts: Int64) {
            earliest = min(earliest ?? ts, ts)
            latest = max(latest ?? ts, ts)
        }

        /// The span, or nil when no time was added.
        package func span(receivedAt: Int64, stretched: Bool) -> BundleTimeSpan? {
            guard let earliest, let latest else { return nil }
            return BundleTimeSpan(receivedAt: receivedAt, earliest: earliest, latest: latest, stretched: stretched)
        }
    }

    /// `ms` in units, rounded down (toward the past for times before 1970 too).
    package static func floor(_ ms: Int64) -> Int64 {
        let (quotient, remainder) = ms.quotientAndRemainder(dividingBy: unit)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// `ms` in units, rounded up.
    package static func ceiling(_ ms: Int64) -> Int64 {
        let (quotient, remainder) = ms.quotientAndRemainder(dividingBy: unit)
        return remainder > 0 ? quotient + 1 : quotient
    }

    /// The SQL condition, over `bundle u`, that keeps every bundle which may hold a line timed in [`since`, `until`),
    /// compared in whole units so that no product overflows. Bundles without spans are kept (read whole).
    package static func overlap(since: Int64?, until: Int64?) -> SQLStatement {
        guard since != nil || until != nil else { return "1 = 1" }
        func meets(from: String, to: String) -> SQLStatement {
            var terms: [SQLStatement] = []
            if let since {
                // (base + to + 1) * unit > since  ⟺  base + to >= ⌊since / unit⌋
                terms.append("u.received_at / \(unsafeRaw: "\(unit)") + \(unsafeRaw: to) >= \(floor(since))")
            }
            if let until {
                // (base + from) * unit < until  ⟺  base + from < ⌈until / unit⌉
                terms.append("u.received_at / \(unsafeRaw: "\(unit)") + \(unsafeRaw: from) < \(ceiling(until))")
            }
            return "(\(SQLStatement.joined(terms, separator: " AND ")))"
        }
        let lines = meets(from: "u.ts_from", to: "u.ts_to")
        let configs = meets(from: "u.config_ts_from", to: "coalesce(u.config_ts_to, u.config_ts_from)")
        return "((u.ts_from IS NULL AND u.config_ts_from IS NULL) OR \(lines) OR \(configs))"
    }
}
