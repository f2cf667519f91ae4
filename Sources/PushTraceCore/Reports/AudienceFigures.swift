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

    /// No device.
    public init() {
        devices = 0
        withSettings = 0
        notificationsDisabled = 0
        provisional = 0
        scheduledDelivery = 0
        timeSensitiveDisabled = 0
    }

    /// Counts `count` more devices whose latest settings at or before the period's end have `summary` (none
    /// without ``SettingsSummary/recorded``).
    public mutating func add(_ summary: SettingsSummary, devices count: Int) {
        devices += count
        guard summary.contains(.recorded) else { return }
        withSettings += count
        if summary.contains(.nothingShown) { notificationsDisabled += count }
        if summary.contains(.provisional) { provisional += count }
        if summary.contains(.scheduledDelivery) { scheduledDelivery += count }
        if summary.contains(.timeSensitiveDisabled) { timeSensitiveDisabled += count }
    }

    /// The share of the devices with settings that cannot be shown anything; nil when none recorded settings.
    public var disabledShare: Double? { withSettings == 0 ? nil : Double(notificationsDisabled) / Double(withSettings) }

    enum CodingKeys: String, CodingKey {
        case devices, withSettings = "with_settings", notificationsDisabled = "notifications_disabled", provisional
        case scheduledDelivery = "scheduled_delivery", timeSensitiveDisabled = "time_sensitive_disabled"
    }
}
