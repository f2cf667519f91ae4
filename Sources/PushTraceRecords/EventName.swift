/// A lifecycle step's name (docs/protocol.md#events). Open: a name this version does not know is stored as it came.
public struct EventName: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public static let pushSent: EventName = "push.sent"
    public static let pushAPNsResponse: EventName = "push.apns_response"
    public static let serviceReceived: EventName = "service.received"
    public static let serviceDownload: EventName = "service.download"
    public static let serviceAttachment: EventName = "service.attachment"
    public static let serviceDelivered: EventName = "service.delivered"
    public static let serviceExpired: EventName = "service.expired"
    public static let serviceAbnormalExit: EventName = "service.abnormal_exit"
    public static let contentReceived: EventName = "content.received"
    public static let contentImage: EventName = "content.image"
    public static let contentAction: EventName = "content.action"
    public static let contentCompletionTimeout: EventName = "content.completion_timeout"
    public static let contentAbnormalExit: EventName = "content.abnormal_exit"
    public static let sharedWrite: EventName = "shared.write"
    public static let sharedRead: EventName = "shared.read"
    public static let appWillPresent: EventName = "app.will_present"
    public static let appResponse: EventName = "app.response"

    /// The fields docs/protocol.md#events requires for each known event, beyond `ts`, `process`, `event` and `notification_id`.
    public static let requiredFields: [EventName: [Record.CodingKeys]] = [
        .pushSent: [.category, .mutableContent, .hasAlert, .payloadBytes],
        .pushAPNsResponse: [.status],
        .serviceDownload: [.urlHost, .durationMs],
        .serviceAttachment: [.ok],
        .serviceDelivered: [.elapsedMs],
        .serviceExpired: [.elapsedMs],
        .contentAction: [.action, .response],
        .contentCompletionTimeout: [.action, .waitedMs],
        .sharedWrite: [.suite],
        .sharedRead: [.suite, .found],
        .appResponse: [.action],
    ]

    /// The events that show the device displayed the notification (docs/protocol.md#causes).
    public static let shownOnDevice: Set<EventName> = [.appWillPresent, .appResponse, .contentReceived, .contentAction]
}
