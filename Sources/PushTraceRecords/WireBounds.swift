/// The ranges a client-supplied value must lie in (docs/security.md). Every value a device or a backend sends is
/// checked against these before any arithmetic, so that no value can overflow, and no text can forge a log line
/// or rewrite a terminal.
public enum WireBounds {
    /// Epoch milliseconds: from 2000-01-01 up to (not including) 2200-01-01 UTC. Any two instants in range differ
    /// by less than 2^43, so sums and differences of them and of the bounded durations below never overflow.
    public static let epochMilliseconds: ClosedRange<Int64> = 946_684_800_000...7_258_118_399_999
    /// Epoch seconds (`expiration`, as APNs's `apns-expiration` header counts), over the same instants.
    public static let epochSeconds: ClosedRange<Int64> = 946_684_800...7_258_118_399
    /// A duration in milliseconds (`duration_ms`, `elapsed_ms`, `waited_ms`): up to one day.
    public static let durationMilliseconds: ClosedRange<Int64> = 0...86_400_000
    /// A size in bytes (`payload_bytes`, `bytes`, `last_footprint_bytes`): up to 4 GiB, far past any attachment
    /// (Apple's largest, video, is 50 MB) or extension footprint. Summed over every download of an app's day, they
    /// stay below 2^63 for fewer than 2^31 downloads.
    public static let byteCount: ClosedRange<Int64> = 0...(1 << 32)
    /// An HTTP status (`status`, `http_status`).
    public static let httpStatus: ClosedRange<Int64> = 0...999
    /// The longest `app_id` (a bundle identifier), in UTF-8 bytes.
    public static let maxAppIDBytes = 255
    /// The longest `bundle_id`, `device_id`, `notification_id` or `category`, in characters (Unicode scalars, as
    /// JSON Schema's `maxLength` counts them in openapi.json): at most four times as many UTF-8 bytes.
    public static let maxIdentifierCharacters = 255
    /// What the store keeps of an action's identifier, in UTF-8 bytes.
    public static let maxIdentifierBytes = 255

    /// The range, as an error message says it.
    public static let epochDescription = "2000-01-01 to 2199-12-31 UTC (epoch milliseconds 946684800000 to 7258118399999)"

    /// Whether `text` is a bundle identifier as `app_id` must be: 1 to 255 bytes of ASCII letters, digits, `.`,
    /// `-` and `_`.
    public static func isAppID(_ text: String) -> Bool {
        let bytes = text.utf8
        return !bytes.isEmpty && bytes.count <= maxAppIDBytes
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Why `text` cannot be an identifier (`bundle_id`, `device_id`, `notification_id`, `category`), or nil when it
    /// can: it must be 1 to 255 characters with no control character (C0, DEL, C1) and no bidirectional override.
    public static func identifierProblem(_ text: String) -> String? {
        if text.isEmpty { return "is empty" }
        // Counting bytes is free and bounds the characters; they are counted only past it.
        if text.utf8.count > maxIdentifierCharacters, text.unicodeScalars.count > maxIdentifierCharacters {
            return "is \(text.unicodeScalars.count) characters long; the limit is \(maxIdentifierCharacters)"
        }
        if let scalar = text.unicodeScalars.first(where: TerminalText.isHidden) {
            return "holds the control character \(TerminalText.escape(scalar)); it must be printable"
        }
        return nil
    }

    /// The instant clamped into ``epochMilliseconds``: what a reader uses of a value an earlier release stored
    /// unchecked, so that arithmetic on it cannot overflow.
    public static func clampedEpoch(_ ms: Int64) -> Int64 {
        min(max(ms, epochMilliseconds.lowerBound), epochMilliseconds.upperBound)
    }
}
