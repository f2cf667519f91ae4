import Foundation

/// What the system accepts as a notification attachment (`UNNotificationAttachment`): types by file extension,
/// and the size limit of each type.
public enum AttachmentKind: String, Sendable, CaseIterable {
    case image, audio, video

    /// The largest file the system accepts for this kind, as Apple documents it for `UNNotificationAttachment`
    /// (images 10 MB, audio 5 MB, video 50 MB), in the decimal megabytes Apple's sizes are written in.
    public var maxBytes: Int64 {
        switch self {
        case .image: 10_000_000
        case .audio: 5_000_000
        case .video: 50_000_000
        }
    }

    /// `maxBytes` as written: "10 MB".
    public var limitText: String { "\(maxBytes / 1_000_000) MB" }

    /// File extensions the system recognises for this kind.
    public var extensions: Set<String> {
        switch self {
        case .image: Self.imageExtensions
        case .audio: Self.audioExtensions
        case .video: Self.videoExtensions
        }
    }

    // Built once: diagnosis asks for every notification with an attachment.
    private static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "gif", "heic", "heif"]
    private static let audioExtensions: Set<String> = ["aif", "aiff", "wav", "mp3", "m4a"]
    private static let videoExtensions: Set<String> = ["mp4", "m4v", "mov", "mpg", "mpeg", "avi"]

    /// The kind of a file name's extension, if recognised.
    public init?(fileExtension: String) {
        let ext = fileExtension.lowercased()
        guard let kind = Self.allCases.first(where: { $0.extensions.contains(ext) }) else { return nil }
        self = kind
    }

    /// The file extension to save a download of MIME type `mime` under, so that the system recognises it as an
    /// attachment (a URL may end in `.php`, or in nothing); nil for a type it does not take.
    public static func fileExtension(forMIME mime: String?) -> String? {
        guard let type = mime?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return nil }
        return mimeExtensions[type]
    }

    private static let mimeExtensions = [
        "image/jpeg": "jpg", "image/jpg": "jpg", "image/png": "png", "image/gif": "gif", "image/heic": "heic",
        "image/heif": "heif", "audio/aiff": "aiff", "audio/x-aiff": "aiff", "audio/wav": "wav", "audio/x-wav": "wav",
        "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "video/mpeg": "mpg", "video/mp4": "mp4",
        "video/x-m4v": "m4v", "video/quicktime": "mov", "video/x-msvideo": "avi", "video/avi": "avi",
    ]

    /// The kind named by a UTI (`public.jpeg`) or a MIME type (`image/jpeg`), if either says.
    public init?(uti: String?, mime: String?) {
        if let mime = mime?.lowercased() {
            if mime.hasPrefix("image/") {
                self = .image
                return
            }
            if mime.hasPrefix("audio/") {
                self = .audio
                return
            }
            if mime.hasPrefix("video/") {
                self = .video
                return
            }
        }
        guard let uti = uti?.lowercased() else { return nil }
        if ["jpeg", "png", "gif", "heic", "heif", "image"].contains(where: uti.contains) {
            self = .image
        } else if ["audio", "mp3", "wav", "aiff", "m4a"].contains(where: uti.contains) {
            self = .audio
        } else if ["movie", "video", "mpeg-4", "mpeg", "avi"].contains(where: uti.contains) {
            self = .video
        } else {
            return nil
        }
    }

    /// The last path component of a URL, without its query or fragment (docs/protocol.md#causes).
    public static func fileName(ofURL url: String) -> String {
        // Byte by byte: the delimiters are ASCII, and diagnosis asks this of every notification with an attachment.
        var url = url
        return url.withUTF8 { bytes in
            let slash = UInt8(ascii: "/")
            var end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
            var start = 0
            // After "://", the path begins at the next slash (the generic `firstRange(of:)` costs more than the rest).
            var colon = 0
            while colon + 2 < end, !(bytes[colon] == UInt8(ascii: ":") && bytes[colon + 1] == slash && bytes[colon + 2] == slash) {
                colon += 1
            }
            if colon + 2 < end {
                start = bytes[(colon + 3)..<end].firstIndex(of: slash) ?? end
            }
            // The last non-empty component: trailing slashes are passed over.
            while end > start, bytes[end - 1] == slash { end -= 1 }
            var first = end
            while first > start, bytes[first - 1] != slash { first -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<end]), as: UTF8.self)
        }
    }

    /// The extension of a file name ("" when it has none).
    public static func fileExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
