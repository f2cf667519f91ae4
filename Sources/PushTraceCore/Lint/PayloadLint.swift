import Foundation
import PushTraceRecords

/// What an app is configured with, as its processes last recorded it (docs/protocol.md#config-records): what `pushtrace lint` checks a
/// payload against.
public struct AppConfiguration: Sendable, Equatable {
    /// The categories the main app registers (nil when no app config record is stored).
    public var registeredCategories: [String]?
    /// The content extension's `UNNotificationExtensionCategory` (nil when no content config record is stored).
    public var contentCategories: [String]?
    /// Whether a service extension has recorded its config: the app has one.
    public var hasServiceExtension: Bool

    public init(registeredCategories: [String]?, contentCategories: [String]?, hasServiceExtension: Bool) {
        self.registeredCategories = registeredCategories
        self.contentCategories = contentCategories
        self.hasServiceExtension = hasServiceExtension
    }
}

/// One thing `pushtrace lint` found in a payload.
public struct LintFinding: Sendable, Equatable, Encodable {
    public enum Severity: String, Sendable, Encodable { case error, warning }
    public var severity: Severity
    /// The cause this would produce (docs/protocol.md#causes), or a lint code of its own.
    public var code: String
    public var message: String
    public var fix: String
}

/// Checks an APNs payload before it is sent: the mistakes that make a rich notification silently lose its card.
public enum PayloadLint {
    /// APNs refuses larger payloads (4 KB for regular pushes).
    public static let maxPayloadBytes = 4_096
    /// Keys under which payloads commonly carry the attachment's URL.
    static let attachmentKeys = [
        "attachment-url", "attachment_url", "attachmentURL", "image", "image-url", "image_url",
        "imageURL", "media-url", "media_url", "mediaURL", "media",
    ]

    /// The findings for payload `bytes` (the JSON as it will be sent); `app` from the stored config records, if known.
    /// Throws when the payload is not a JSON object with an `aps` dictionary.
    public static func check(_ bytes: [UInt8], app: AppConfiguration?) throws(LintInputError) -> [LintFinding] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let payload = object as? [String: Any] else {
            throw LintInputError(message: "the payload is not a JSON object")
        }
        guard let aps = payload["aps"] as? [String: Any] else {
            throw LintInputError(message: "the payload has no \"aps\" dictionary: APNs needs one")
        }
        var findings: [LintFinding] = []
        func add(_ severity: LintFinding.Severity, _ code: String, _ message: String, _ fix: String) {
            findings.append(LintFinding(severity: severity, code: code, message: message, fix: fix))
        }
        let compact = (try? JSONSerialization.data(withJSONObject: payload))?.count ?? bytes.count
        if compact > maxPayloadBytes {
            add(
                .error, "payload_too_large", "The payload is \(compact) bytes compacted; APNs refuses more than \(maxPayloadBytes).",
                "Send less in the payload: an ID the extension fetches details for, not the details.")
        }
        let alert = aps["alert"]
        let hasAlert = (alert as? String).map { !$0.isEmpty } ?? (alert as? [String: Any]).map { !$0.isEmpty } ?? false
        if !hasAlert {
            add(
                .error, Cause.alertMissing.rawValue, "aps has no alert: nothing is displayed and no extension runs.",
                "Add \"alert\": {\"title\": …, \"body\": …} to aps (a silent push cannot show a card).")
        }
        let mutable = (aps["mutable-content"] as? NSNumber)?.intValue == 1
        let attachment = attachmentURL(in: payload)
        if !mutable, app?.hasServiceExtension == true || attachment != nil {
            let why = app?.hasServiceExtension == true ? "the app has a service extension" : "the payload carries an attachment URL"
            add(
                .error, Cause.mutableContentMissing.rawValue,
                "aps lacks \"mutable-content\": 1 although \(why): the service extension will not run.",
                "Add \"mutable-content\": 1 to aps.")
        }
        let category = aps["category"] as? String
        if let category, let registered = app?.registeredCategories, !registered.contains(category) {
            add(
                .error, Cause.categoryUnregistered.rawValue,
                "Category '\(category)' is not among the app's registered categories\(nearest(category, registered)): no action buttons.",
                "Send a registered category, or register '\(category)' with UNUserNotificationCenter.setNotificationCategories.")
        } else if let category, let handled = app?.contentCategories, !handled.contains(category) {
            add(
                .error, Cause.categoryNotHandled.rawValue,
                "Category '\(category)' is not in the content extension's UNNotificationExtensionCategory\(nearest(category, handled)): no custom card.",
                "Add '\(category)' to UNNotificationExtensionCategory in the content extension's Info.plist, or send a handled category.")
        } else if category == nil, app?.contentCategories?.isEmpty == false {
            add(
                .warning, "category_missing", "aps has no category: the content extension's card will not show.",
                "Add \"category\": one of \(app!.contentCategories!.joined(separator: ", ")).")
        }
        if let attachment {
            let name = AttachmentKind.fileName(ofURL: attachment.url)
            let ext = AttachmentKind.fileExtension(of: name)
            if AttachmentKind(fileExtension: ext) == nil {
                add(
                    .error, Cause.attachmentFailed.rawValue,
                    "The attachment URL in \"\(attachment.key)\" ends in '\(name)', "
                        + (ext.isEmpty ? "which has no file extension" : "whose extension '.\(ext)' the system does not recognise")
                        + ": UNNotificationAttachment will refuse the file.",
                    "Serve it under a name ending in .jpg, .png, .gif, .heic, .mp3, .m4a, .mp4 or .mov, or have the "
                        + "service extension save it under such a name before attaching it.")
            }
        }
        return findings
    }

    private static func nearest(_ name: String, _ candidates: [String]) -> String {
        EditDistance.nearest(to: name, in: candidates).map { " (nearest: '\($0)')" } ?? ""
    }

    /// The first http(s) URL under a known attachment key, at the top level or one level down.
    static func attachmentURL(in payload: [String: Any]) -> (key: String, url: String)? {
        var scopes: [(String, [String: Any])] = [("", payload)]
        scopes += payload.compactMap { key, value in (value as? [String: Any]).map { (key + ".", $0) } }
        for (prefix, scope) in scopes {
            for key in attachmentKeys {
                if let url = scope[key] as? String, url.hasPrefix("http://") || url.hasPrefix("https://") {
                    return (prefix + key, url)
                }
            }
        }
        return nil
    }
}

/// A payload `pushtrace lint` cannot check.
public struct LintInputError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
