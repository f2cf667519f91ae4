/// Device clock correction (docs/protocol.md#clocks).
public enum ClockCorrection {
    /// Offsets within this tolerance (either direction) are taken as transit time, not a wrong clock.
    public static let toleranceMs: Int64 = 5_000

    /// The milliseconds to add to every `ts` of a bundle received at `receivedAt` whose manifest says it was
    /// uploaded at `uploadedAt` (both epoch milliseconds): 0 when within tolerance or when `uploadedAt` is absent.
    /// Both are bounded where they are read (``WireBounds/epochMilliseconds``); beyond that, an offset that would
    /// overflow is taken as no correction rather than trapping.
    public static func offset(receivedAt: Int64, uploadedAt: Int64?) -> Int64 {
        guard let uploadedAt else { return 0 }
        let (offset, overflow) = receivedAt.subtractingReportingOverflow(uploadedAt)
        guard !overflow, offset != .min else { return 0 }
        return abs(offset) > toleranceMs ? offset : 0
    }

    /// `ts` corrected by `offset`, saturating at the ends of `Int64` rather than trapping.
    public static func corrected(_ ts: Int64, by offset: Int64) -> Int64 {
        let (sum, overflow) = ts.addingReportingOverflow(offset)
        return overflow ? (offset > 0 ? .max : .min) : sum
    }
}
