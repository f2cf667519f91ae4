/// A small deterministic generator (SplitMix64): the same seed gives the same bundles on every machine.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`.
    mutating func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }

    /// An uppercase UUID, as `UNNotificationRequest.identifier` shows an apns-id.
    mutating func uuid() -> String {
        let a = next(), b = next()
        let hex = String(a, radix: 16).leftPadded(16) + String(b, radix: 16).leftPadded(16)
        let h = Array(hex.uppercased())
        return String(h[0..<8]) + "-" + String(h[8..<12]) + "-4" + String(h[13..<16]) + "-A" + String(h[17..<20])
            + "-" + String(h[20..<32])
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
