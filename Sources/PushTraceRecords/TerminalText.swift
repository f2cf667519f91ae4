/// Text a device or a client sent, made safe to show where a person reads it: a terminal or a log line.
///
/// Control characters are shown escaped instead of acting: a device's `message` must not move the cursor, change
/// the window title, clear a line or start a forged log line. JSON output does not need this: its encoder escapes
/// control characters already, and keeps the text exact.
public enum TerminalText {
    /// `text` with every hidden character visibly escaped: `\n`, `\r`, `\t`, `\e` for ESC, and `\u{…}`
    /// for the rest (C0 and C1 controls, DEL, bidirectional overrides and isolates). Text without any is returned
    /// as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isHidden) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isHidden(scalar) { out.append(contentsOf: escape(scalar).unicodeScalars) } else { out.append(scalar) }
        }
        return String(out)
    }

    /// The visible form of one hidden character.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\u{1B}": return "\\e"
        default: return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// Whether a character acts on a terminal or a log line instead of showing: C0 controls, DEL, C1 controls,
    /// the line and paragraph separators, and the bidirectional overrides and isolates (which reorder what
    /// follows them on screen).
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
