/// One bundle line after the manifest (docs/protocol.md#bundles, #events, #config-records), with the fields of the v1 vocabulary pushtrace reads.
///
/// Every field is optional so that one type decodes events, logs and config records alike; which fields are
/// required is checked after decoding, so that the error can name the line and the field. Fields not listed here
/// are not lost: the store keeps every line as it came.
public struct Record: Codable, Sendable, Hashable {
    public var type: String?
    /// Unix epoch milliseconds on the writer's clock.
    public var ts: Int64?
    public var process: String?
    public var event: String?
    public var notificationID: String?

    // log
    public var level: String?
    public var message: String?

    // config
    public var appGroup: String?
    public var categories: [CategoryConfig]?
    public var interactiveControls: Bool?
    public var infoPlist: ContentExtensionPlist?
    public var notificationSettings: NotificationSettings?

    // push.sent / push.apns_response
    public var category: String?
    public var mutableContent: Bool?
    public var hasAlert: Bool?
    public var payloadBytes: Int64?
    public var deviceID: String?
    public var attachmentURL: String?
    public var status: Int64?
    public var reason: String?
    /// The aps `interruption-level` (`push.sent`), or the level of the content handed back (`service.delivered`).
    public var interruptionLevel: String?
    /// The `apns-collapse-id` header.
    public var collapseID: String?
    /// The `apns-expiration` header, in epoch seconds (`0`: now or never).
    public var expiration: Int64?

    // service.*
    public var urlHost: String?
    public var durationMs: Int64?
    public var httpStatus: Int64?
    public var bytes: Int64?
    public var mime: String?
    public var error: String?
    public var ok: Bool?
    public var uti: String?
    public var elapsedMs: Int64?
    public var lastFootprintBytes: Int64?

    // content.*, shared.*, app.*
    public var action: String?
    public var response: String?
    public var waitedMs: Int64?
    public var suite: String?
    public var key: String?
    public var found: Bool?

    public init(
        type: RecordType = .event, ts: Int64, process: ProcessKind, event: EventName? = nil,
        notificationID: String? = nil
    ) {
        self.type = type.rawValue
        self.ts = ts
        self.process = process.rawValue
        self.event = event?.rawValue
        self.notificationID = notificationID
    }

    /// Decodes only the keys the line has: a line carries a handful of the vocabulary's fields, and looking up
    /// every one of them would cost more than the rest of decoding. Unknown keys are skipped (the raw line keeps them).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        for k in c.allKeys {
            switch k {
            case .type: type = try c.decodeIfPresent(String.self, forKey: k)
            case .ts: ts = try c.decodeIfPresent(Int64.self, forKey: k)
            case .process: process = try c.decodeIfPresent(String.self, forKey: k)
            case .event: event = try c.decodeIfPresent(String.self, forKey: k)
            case .notificationID: notificationID = try c.decodeIfPresent(String.self, forKey: k)
            case .level: level = try c.decodeIfPresent(String.self, forKey: k)
            case .message: message = try c.decodeIfPresent(String.self, forKey: k)
            case .appGroup: appGroup = try c.decodeIfPresent(String.self, forKey: k)
            case .categories: categories = try c.decodeIfPresent([CategoryConfig].self, forKey: k)
            case .interactiveControls: interactiveControls = try c.decodeIfPresent(Bool.self, forKey: k)
            case .infoPlist: infoPlist = try c.decodeIfPresent(ContentExtensionPlist.self, forKey: k)
            case .notificationSettings: notificationSettings = try c.decodeIfPresent(NotificationSettings.self, forKey: k)
            case .interruptionLevel: interruptionLevel = try c.decodeIfPresent(String.self, forKey: k)
            case .collapseID: collapseID = try c.decodeIfPresent(String.self, forKey: k)
            case .expiration: expiration = try c.decodeIfPresent(Int64.self, forKey: k)
            case .category: category = try c.decodeIfPresent(String.self, forKey: k)
            case .mutableContent: mutableContent = try c.decodeIfPresent(Bool.self, forKey: k)
            case .hasAlert: hasAlert = try c.decodeIfPresent(Bool.self, forKey: k)
            case .payloadBytes: payloadBytes = try c.decodeIfPresent(Int64.self, forKey: k)
            case .deviceID: deviceID = try c.decodeIfPresent(String.self, forKey: k)
            case .attachmentURL: attachmentURL = try c.decodeIfPresent(String.self, forKey: k)
            case .status: status = try c.decodeIfPresent(Int64.self, forKey: k)
            case .reason: reason = try c.decodeIfPresent(String.self, forKey: k)
            case .urlHost: urlHost = try c.decodeIfPresent(String.self, forKey: k)
            case .durationMs: durationMs = try c.decodeIfPresent(Int64.self, forKey: k)
            case .httpStatus: httpStatus = try c.decodeIfPresent(Int64.self, forKey: k)
            case .bytes: bytes = try c.decodeIfPresent(Int64.self, forKey: k)
            case .mime: mime = try c.decodeIfPresent(String.self, forKey: k)
            case .error: error = try c.decodeIfPresent(String.self, forKey: k)
            case .ok: ok = try c.decodeIfPresent(Bool.self, forKey: k)
            case .uti: uti = try c.decodeIfPresent(String.self, forKey: k)
            case .elapsedMs: elapsedMs = try c.decodeIfPresent(Int64.self, forKey: k)
            case .lastFootprintBytes: lastFootprintBytes = try c.decodeIfPresent(Int64.self, forKey: k)
            case .action: action = try c.decodeIfPresent(String.self, forKey: k)
            case .response: response = try c.decodeIfPresent(String.self, forKey: k)
            case .waitedMs: waitedMs = try c.decodeIfPresent(Int64.self, forKey: k)
            case .suite: suite = try c.decodeIfPresent(String.self, forKey: k)
            case .key: self.key = try c.decodeIfPresent(String.self, forKey: k)
            case .found: found = try c.decodeIfPresent(Bool.self, forKey: k)
            }
        }
    }

    /// The record's kind, when it is one this version knows.
    public var recordType: RecordType? { type.flatMap(RecordType.init(rawValue:)) }
    /// The writing process, when it is one of the four of docs/protocol.md#bundles.
    public var processKind: ProcessKind? { process.flatMap(ProcessKind.init(rawValue:)) }
    /// The event name (open vocabulary).
    public var eventName: EventName? { event.map(EventName.init(rawValue:)) }

    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case type, ts, process, event
        case notificationID = "notification_id"
        case level, message
        case appGroup = "app_group"
        case categories
        case interactiveControls = "interactive_controls"
        case infoPlist = "info_plist"
        case category
        case mutableContent = "mutable_content"
        case hasAlert = "has_alert"
        case payloadBytes = "payload_bytes"
        case deviceID = "device_id"
        case attachmentURL = "attachment_url"
        case status, reason
        case urlHost = "url_host"
        case durationMs = "duration_ms"
        case httpStatus = "http_status"
        case bytes, mime, error, ok, uti
        case elapsedMs = "elapsed_ms"
        case lastFootprintBytes = "last_footprint_bytes"
        case action, response
        case waitedMs = "waited_ms"
        case suite, key, found
        case notificationSettings = "notification_settings"
        case interruptionLevel = "interruption_level"
        case collapseID = "collapse_id"
        case expiration
    }

    /// Whether the field for `key` is present (non-nil).
    public func has(_ key: CodingKeys) -> Bool {
        switch key {
        case .type: type != nil
        case .ts: ts != nil
        case .process: process != nil
        case .event: event != nil
        case .notificationID: notificationID != nil
        case .level: level != nil
        case .message: message != nil
        case .appGroup: appGroup != nil
        case .categories: categories != nil
        case .interactiveControls: interactiveControls != nil
        case .infoPlist: infoPlist != nil
        case .category: category != nil
        case .mutableContent: mutableContent != nil
        case .hasAlert: hasAlert != nil
        case .payloadBytes: payloadBytes != nil
        case .deviceID: deviceID != nil
        case .attachmentURL: attachmentURL != nil
        case .status: status != nil
        case .reason: reason != nil
        case .urlHost: urlHost != nil
        case .durationMs: durationMs != nil
        case .httpStatus: httpStatus != nil
        case .bytes: bytes != nil
        case .mime: mime != nil
        case .error: error != nil
        case .ok: ok != nil
        case .uti: uti != nil
        case .elapsedMs: elapsedMs != nil
        case .lastFootprintBytes: lastFootprintBytes != nil
        case .action: action != nil
        case .response: response != nil
        case .waitedMs: waitedMs != nil
        case .suite: suite != nil
        case .key: self.key != nil
        case .found: found != nil
        case .notificationSettings: notificationSettings != nil
        case .interruptionLevel: interruptionLevel != nil
        case .collapseID: collapseID != nil
        case .expiration: expiration != nil
        }
    }
}

extension Record {
    /// The push's collapse identifier, when it names one: an empty `collapse_id` is no `apns-collapse-id`, so it
    /// collapses nothing (docs/protocol.md#events).
    public var collapseKey: String? { collapseID.flatMap { $0.isEmpty ? nil : $0 } }
}
