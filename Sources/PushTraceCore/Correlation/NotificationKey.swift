/// The correlation key of docs/spec.md §1: a notification ID that parses as a UUID is compared case-insensitively
/// (stored lowercased); any other ID is compared exactly.
public enum NotificationKey {
    /// The stored form of `id`.
    public static func normalize(_ id: String) -> String {
        // Every record of a bundle passes here: an ID already in its stored form is returned as it is.
        guard isUUID(id), id.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }) else { return id }
        return id.lowercased()
    }

    /// Whether `id` has the 8-4-4-4-12 hexadecimal shape of a UUID.
    public static func isUUID(_ id: String) -> Bool {
        var id = id
        return id.withUTF8 { bytes in
            guard bytes.count == 36 else { return false }
            for offset in 0..<36 {
                let byte = bytes[offset]
                switch offset {
                case 8, 13, 18, 23:
                    if byte != UInt8(ascii: "-") { return false }
                default:
                    let isHex = (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102)
                    if !isHex { return false }
                }
            }
            return true
        }
    }
}
