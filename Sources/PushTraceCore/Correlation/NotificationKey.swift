/// The correlation key of SPEC §1: a notification ID that parses as a UUID is compared case-insensitively
/// (stored lowercased); any other ID is compared exactly.
public enum NotificationKey {
    /// The stored form of `id`.
    public static func normalize(_ id: String) -> String {
        isUUID(id) ? id.lowercased() : id
    }

    /// Whether `id` has the 8-4-4-4-12 hexadecimal shape of a UUID.
    public static func isUUID(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard utf8.count == 36 else { return false }
        for (offset, byte) in utf8.enumerated() {
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
