import PushTraceRecords

/// What the audience counts of one config record's notification settings (docs/protocol.md#reports-the-audience),
/// kept beside the record in the store (`config.settings`) so that an audience over thousands of devices is read
/// without decoding their records. Empty: the record carries no settings.
public struct SettingsSummary: OptionSet, Sendable, Hashable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The record carries settings.
    public static let recorded = SettingsSummary(rawValue: 1)
    /// Nothing can be shown (``NotificationSettings/nothingShown``).
    public static let nothingShown = SettingsSummary(rawValue: 2)
    public static let provisional = SettingsSummary(rawValue: 4)
    /// Notification Summary on.
    public static let scheduledDelivery = SettingsSummary(rawValue: 8)
    public static let timeSensitiveDisabled = SettingsSummary(rawValue: 16)

    /// The summary of a record's settings; a record without them (or with none known) has none.
    public init(_ settings: NotificationSettings?) {
        self = []
        guard let settings, !settings.isEmpty else { return }
        insert(.recorded)
        if settings.nothingShown != nil { insert(.nothingShown) }
        if settings.authorizationStatus == .provisional { insert(.provisional) }
        if settings.scheduledDeliverySetting == .enabled { insert(.scheduledDelivery) }
        if settings.timeSensitiveSetting == .disabled { insert(.timeSensitiveDisabled) }
    }
}
