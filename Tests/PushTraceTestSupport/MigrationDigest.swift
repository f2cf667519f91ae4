import PushTraceStore

/// The digest a released migration's SQL is held to: 64-bit FNV-1a (the store's own line digest), in hex, enough to
/// see that a migration changed.
public enum MigrationDigest {
    public static func of(_ sql: String) -> String {
        let hex = String(UInt64(bitPattern: ConfigBodyDigest.of(sql)), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// What to say when `recorded` and `computed` (migration name → digest, in order) differ.
    public static func difference(recorded: [(String, String)], computed: [(String, String)]) -> String? {
        guard recorded.map(\.0) != computed.map(\.0) || recorded.map(\.1) != computed.map(\.1) else { return nil }
        var lines = [
            "A released migration never changes (docs/schema.md): add a new one instead. A new migration is recorded",
            "here once it is released. Computed now:",
        ]
        for (name, digest) in computed {
            let was = recorded.first { $0.0 == name }?.1
            let mark = was == nil ? "  (new)" : was == digest ? "" : "  (CHANGED from \(was!))"
            lines.append("    (\"\(name)\", \"\(digest)\"),\(mark)")
        }
        for (name, _) in recorded where !computed.contains(where: { $0.0 == name }) {
            lines.append("    \(name): REMOVED")
        }
        return lines.joined(separator: "\n")
    }
}
