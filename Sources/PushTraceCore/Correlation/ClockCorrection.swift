/// Device clock correction (SPEC §5).
public enum ClockCorrection {
    /// Offsets within this tolerance (either direction) are taken as transit time, not a wrong clock.
    public static let toleranceMs: Int64 = 5_000

    /// The milliseconds to add to every `ts` of a bundle received at `receivedAt` whose manifest says it was
    /// uploaded at `uploadedAt` (both epoch milliseconds): 0 when within tolerance or when `uploadedAt` is absent.
    public static func offset(receivedAt: Int64, uploadedAt: Int64?) -> Int64 {
        guard let uploadedAt else { return 0 }
        let offset = receivedAt - uploadedAt
        return abs(offset) > toleranceMs ? offset : 0
    }
}
