/// The answer codes of docs/protocol.md#causes, in priority order: the primary cause of a notification is its first finding in
/// this order.
public enum Cause: String, Codable, Sendable, CaseIterable, Comparable {
    case unknownNotification = "unknown_notification"
    case apnsRejected = "apns_rejected"
    case notificationsDisabled = "notifications_disabled"
    case alertMissing = "alert_missing"
    case mutableContentMissing = "mutable_content_missing"
    case serviceNotRun = "service_not_run"
    case serviceCrashed = "service_crashed"
    case serviceTimeout = "service_timeout"
    case attachmentFailed = "attachment_failed"
    case categoryUnregistered = "category_unregistered"
    case categoryNotHandled = "category_not_handled"
    case interactionDisabled = "interaction_disabled"
    case contentCrashed = "content_crashed"
    case completionNotCalled = "completion_not_called"
    case dismissedBeforeUpdate = "dismissed_before_update"
    case appGroupMismatch = "app_group_mismatch"
    case expiredUndelivered = "expired_undelivered"
    case coalescedOffline = "coalesced_offline"
    case notDelivered = "not_delivered"
    case awaitingDeviceLogs = "awaiting_device_logs"
    case replaced
    case deliveredQuietly = "delivered_quietly"
    case heldForSummary = "held_for_summary"
    /// A finding that comes only with `held_for_summary`, never a primary cause: the push was sent
    /// `time-sensitive`, and the user turned time-sensitive notifications off, so it was held like any other.
    case timeSensitiveOff = "time_sensitive_off"
    case notExpanded = "not_expanded"
    /// Not in docs/protocol.md#causes: an action the content extension forwarded (`dismissAndForwardAction`) that the main app's
    /// response handler never reported. Without it such a notification would have no fitting answer.
    case forwardedActionUnhandled = "forwarded_action_unhandled"
    case ok

    public static func < (lhs: Cause, rhs: Cause) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The family a cause belongs to, for grouping in the demo and in reports.
    public var family: String {
        switch self {
        case .unknownNotification, .notDelivered, .awaitingDeviceLogs: return "delivery"
        case .expiredUndelivered, .coalescedOffline, .replaced: return "APNs delivery rules"
        case .notificationsDisabled, .deliveredQuietly, .heldForSummary, .timeSensitiveOff: return "user settings"
        case .apnsRejected, .alertMissing, .mutableContentMissing: return "payload"
        case .serviceNotRun, .serviceCrashed, .serviceTimeout, .attachmentFailed: return "service extension"
        case .categoryUnregistered, .categoryNotHandled, .interactionDisabled: return "configuration"
        case .contentCrashed, .completionNotCalled, .dismissedBeforeUpdate, .appGroupMismatch,
            .forwardedActionUnhandled:
            return "content extension"
        case .notExpanded, .ok: return "user"
        }
    }
}
