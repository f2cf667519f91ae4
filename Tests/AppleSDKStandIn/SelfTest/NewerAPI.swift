// Must be refused by scripts/check-availability.py: `firstRange(of:)` is iOS 16 / macOS 13, newer than the agent's
// deployment targets, and nothing guards it. The guarded uses below must pass.
func unguarded(_ text: String) -> Bool {
    text.firstRange(of: "-") != nil
}

func guarded(_ text: String) -> Bool {
    if #available(iOS 16, macOS 13, *) {
        return text.firstRange(of: "-") != nil
    }
    return text.contains("-")
}

@available(iOS 16, macOS 13, *)
func marked(_ text: String) -> Bool {
    text.firstRange(of: "-") != nil
}
