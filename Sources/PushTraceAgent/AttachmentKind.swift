import Foundation

/// The attachment types a notification service extension can attach, with the file extension the system recognises
/// and Apple's size limit for each (UNNotificationAttachment: images 10 MB, audio 5 MB, video 50 MB; MB as Apple
/// writes sizes, 1,000,000 bytes).
struct AttachmentKind: Equatable {
    let name: String
    let fileExtension: String
    let limit: Int64

    private static let image = (name: "images", limit: Int64(10_000_000))
    private static let audio = (name: "audio", limit: Int64(5_000_000))
    private static let video = (name: "video", limit: Int64(50_000_000))

    /// By file extension, lower-cased: what the system accepts.
    private static let known: [String: (name: String, limit: Int64)] = [
        "jpg": image, "jpeg": image, "png": image, "gif": image,
        "aif": audio, "aiff": audio, "wav": audio, "mp3": audio, "m4a": audio,
        "mpg": video, "mpeg": video, "mp4": video, "m4v": video, "avi": video,
    ]
    private static let mimeExtensions = [
        "image/jpeg": "jpg", "image/jpg": "jpg", "image/png": "png", "image/gif": "gif",
        "audio/aiff": "aiff", "audio/x-aiff": "aiff", "audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3",
        "audio/mp4": "m4a", "audio/x-m4a": "m4a",
        "video/mpeg": "mpg", "video/mp4": "mp4", "video/x-m4v": "m4v", "video/x-msvideo": "avi", "video/avi": "avi",
    ]

    /// The kind a download is, from its served MIME type first (a URL may end in `.php` or nothing), else from the
    /// URL's extension; nil when neither names a type the system takes.
    init?(mime: String?, pathExtension: String) {
        let type = mime?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let fileExtension = type.flatMap({ Self.mimeExtensions[$0] }) ?? Optional(pathExtension.lowercased()),
              let kind = Self.known[fileExtension] else { return nil }
        self.init(name: kind.name, fileExtension: fileExtension, limit: kind.limit)
    }

    private init(name: String, fileExtension: String, limit: Int64) {
        self.name = name
        self.fileExtension = fileExtension
        self.limit = limit
    }
}
