/// The user's notification settings as the app read them from `UNUserNotificationCenter.notificationSettings()`,
/// carried by a config record (docs/protocol.md#notification-settings). A field left out is unknown. Values
/// are kept as written, so that a value a newer agent sends is stored and read as unknown rather than rejected.
public struct NotificationSettings: Codable, Sendable, Hashable {
    /// `UNAuthorizationStatus`: `not_determined`, `denied`, `authorized`, `provisional`, `ephemeral`.
    public var authorization: String?
    /// `alertSetting`, `lockScreenSetting`, `notificationCenterSetting`, `scheduledDeliverySetting` and
    /// `timeSensitiveSetting` (`UNNotificationSetting`): `enabled`, `disabled`, `not_supported`.
    public var alert: String?
    public var lockScreen: String?
    public var notificationCenter: String?
    /// `UNAlertStyle`: `none`, `banner`, `alert`.
    public var alertStyle: String?
    public var scheduledDelivery: String?
    public var timeSensitive: String?

    public init(
        authorization: Authorization? = nil, alert: Setting? = nil, lockScreen: Setting? = nil,
        notificationCenter: Setting? = nil, alertStyle: AlertStyle? = nil, scheduledDelivery: Setting? = nil,
        timeSensitive: Setting? = nil
    ) {
        self.authorization = authorization?.rawValue
        self.alert = alert?.rawValue
        self.lockScreen = lockScreen?.rawValue
        self.notificationCenter = notificationCenter?.rawValue
        self.alertStyle = alertStyle?.rawValue
        self.scheduledDelivery = scheduledDelivery?.rawValue
        self.timeSensitive = timeSensitive?.rawValue
    }

    /// `UNAuthorizationStatus`, as the wire spells it.
    public enum Authorization: String, Sendable, CaseIterable {
        case notDetermined = "not_determined", denied, authorized, provisional, ephemeral
    }

    /// `UNNotificationSetting`, as the wire spells it.
    public enum Setting: String, Sendable, CaseIterable {
        case enabled, disabled, notSupported = "not_supported"
    }

    /// `UNAlertStyle`, as the wire spells it.
    public enum AlertStyle: String, Sendable, CaseIterable {
        case none, banner, alert
    }

    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case authorization, alert
        case lockScreen = "lock_screen"
        case notificationCenter = "notification_center"
        case alertStyle = "alert_style"
        case scheduledDelivery = "scheduled_delivery"
        case timeSensitive = "time_sensitive"
    }

    public var authorizationStatus: Authorization? { authorization.flatMap(Authorization.init(rawValue:)) }
    public var alertSetting: Setting? { alert.flatMap(Setting.init(rawValue:)) }
    public var lockScreenSetting: Setting? { lockScreen.flatMap(Setting.init(rawValue:)) }
    public var notificationCenterSetting: Setting? { notificationCenter.flatMap(Setting.init(rawValue:)) }
    public var alertStyleSetting: AlertStyle? { alertStyle.flatMap(AlertStyle.init(rawValue:)) }
    public var scheduledDeliverySetting: Setting? { scheduledDelivery.flatMap(Setting.init(rawValue:)) }
    public var timeSensitiveSetting: Setting? { timeSensitive.flatMap(Setting.init(rawValue:)) }

    /// Why nothing of the app can be shown, or nil when something can (or too little is known to say): the
    /// authorization is `denied` or `not_determined`, or alerts, the Lock Screen and Notification Center are all
    /// disabled. The text names the setting, as the diagnosis says it.
    public var nothingShown: String? {
        switch authorizationStatus {
        case .denied: return "notifications are turned off for the app (authorization denied)"
        case .notDetermined: return "the app never asked for permission to notify (authorization not determined)"
        default: break
        }
        if alertSetting == .disabled, lockScreenSetting == .disabled, notificationCenterSetting == .disabled {
            return "alerts, the Lock Screen and Notification Center are all turned off for the app"
        }
        return nil
    }

    /// Whether nothing is known: every field left out.
    public var isEmpty: Bool { self == NotificationSettings() }

    /// The object a config record carries, with the fields that are known.
    public var jsonValue: JSONValue {
        let fields: [(CodingKeys, String?)] = [
            (.authorization, authorization), (.alert, alert), (.lockScreen, lockScreen),
            (.notificationCenter, notificationCenter), (.alertStyle, alertStyle),
            (.scheduledDelivery, scheduledDelivery), (.timeSensitive, timeSensitive),
        ]
        var object: [String: JSONValue] = [:]
        for (key, value) in fields { if let value { object[key.rawValue] = .string(value) } }
        return .object(object)
    }
}

/// The aps `interruption-level` (`UNNotificationInterruptionLevel`), as the wire spells it; absent means `active`.
public enum InterruptionLevel: String, Sendable, CaseIterable, Comparable {
    case passive, active, timeSensitive = "time-sensitive", critical

    /// The level a record's field names: absent or not one of the four (which iOS ignores) is `active`.
    public init(wire: String?) {
        self = wire.flatMap(InterruptionLevel.init(rawValue:)) ?? .active
    }

    public static func < (a: InterruptionLevel, b: InterruptionLevel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
