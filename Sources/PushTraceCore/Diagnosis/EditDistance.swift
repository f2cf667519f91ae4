/// Nearest-name hints for identifiers that differ by a character or two ("DAILY_PIKC" → "DAILY_PICK").
public enum EditDistance {
    /// The Levenshtein distance between `a` and `b` (insertions, deletions and substitutions of characters).
    public static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The candidate closest to `name` (ties go to the earlier one), or nil when there are none.
    public static func nearest(to name: String, in candidates: [String]) -> String? {
        candidates.min { between(name, $0) < between(name, $1) }
    }
}
