import PushTraceRecords

/// Text made safe for a page. Mustache escapes what it substitutes; this is for what the console writes itself (the
/// SVG charts) and for what a device sent, whose hidden characters must show instead of reordering the page.
public enum HTMLText {
    /// `text` with `&`, `<`, `>`, `"` and `'` escaped, for element content and quoted attributes.
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// Stored text as a person should read it: control characters, bidirectional overrides and isolates shown
    /// escaped (`\u{202E}`), as the terminal shows them (``TerminalText``). Still to be HTML-escaped.
    public static func visible(_ text: String) -> String { TerminalText.escaped(text) }

    /// Both: visible, then escaped.
    public static func safe(_ text: String) -> String { escaped(visible(text)) }
}
