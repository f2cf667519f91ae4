import PushTraceRecords

/// Who could be reached in a period (docs/protocol.md#reports-the-audience): the devices that recorded anything for the app in
/// it, those of them whose app recorded the user's notification settings, and, by each one's latest settings at or
/// before the period's end, how many cannot be shown anything, are provisional, have Notification Summary on, and
/// have time-sensitive notifications off.
public struct AudienceFigures: Encodable, Sendable, Equatable {
    public var devices: Int
    public var withSettings: Int
    public var notificationsDisabled: Int
    public var provisional: Int
    public var scheduledDelivery: Int
    public var timeSensitiveDisabled: Int

    /// The figures of the period's devices, each with its latest settings at or before the period's end (nil: none).
    public init(devices settings: [NotificationSettings?]) {
        devices = settings.count
        let known = settings.compactMap { $0 }
        withSettings = known.count
        notificationsDisabled = known.filter { $0.nothingShown != nil }.count
        provisional = known.filter { $0.authorizationStatus == .provisional }.count
        scheduledDelivery = known.filter { $0.scheduledDeliverySetting == .enabled }.count
        timeSensitiveDisabled = known.filter { $0.timeSensitiveSetting == .disabled }.count
    }

    /// The share of the devices with settings that cannot be shown anything; nil when none recorded settings.
    public var disabledShare: Double? { withSettings == 0 ? nil : Double(notificationsDisabled) / Double(withSettings) }

    enum CodingKeys: String, CodingKey {
        case devices, withSettings = "with_settings", notificationsDisabled = "notifications_disabled", provisional
        case scheduledDelivery = "scheduled_delivery", timeSensitiveDisabled = "time_sensitive_disabled"
    }
}
