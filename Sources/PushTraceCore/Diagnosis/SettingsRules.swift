import PushTraceRecords

/// What the user's notification settings and the push's interruption level explain (docs/protocol.md#causes):
/// `notifications_disabled`, and the refinements of `not_expanded`: `delivered_quietly`, `held_for_summary` and its
/// companion `time_sensitive_off`.
enum SettingsRules {
    /// `notifications_disabled`: the settings in force say nothing can be shown, and the device shows no sign of
    /// displaying it.
    static func findings(_ facts: Facts) -> [Finding] {
        guard let inForce = facts.input.settings, let reason = inForce.settings.nothingShown, facts.shownOnDevice.isEmpty
        else { return [] }
        let since = inForce.disabledSince ?? inForce.entry
        return [
            Finding(
                .notificationsDisabled,
                "The device's notification settings say nothing of the app can be shown: \(reason), as recorded since "
                    + "\(InstantText.format(since.ts)) UTC.",
                evidence: [since, inForce.entry].uniqued() + facts.categoryEvidence,
                fix: "Ask in the app before sending (requestAuthorization, or explain first and open "
                    + "UIApplication.openNotificationSettingsURLString), and stop sending rich pushes to devices that "
                    + "turned notifications off.")
        ]
    }

    /// The refinements of `not_expanded` that the settings and the level explain: it went to Notification Center
    /// without alerting, or iOS held it for the scheduled summary.
    static func quietFindings(_ facts: Facts) -> [Finding] {
        let level = facts.interruptionLevel
        let settings = facts.input.settings?.settings
        let settingsEvidence = [facts.input.settings?.entry].compactMap { $0 }
        var findings: [Finding] = []
        if level.level == .passive {
            findings.append(
                Finding(
                    .deliveredQuietly,
                    "It was delivered at interruption level passive, so it went to Notification Center without a banner "
                        + "or sound, and the user never expanded it.",
                    evidence: [level.entry].compactMap { $0 },
                    fix: "Send it at level active (or time-sensitive, with the entitlement and the user's consent) when "
                        + "it should alert; check the service extension's interruptionLevel when it rewrites the content."))
        } else if settings?.authorizationStatus == .provisional || settings?.alertStyleSetting == NotificationSettings.AlertStyle.none {
            let why =
                settings?.authorizationStatus == .provisional
                ? "the app's authorization is provisional, so iOS delivers quietly to Notification Center"
                : "the user set the app's alert style to None, so no banner shows"
            findings.append(
                Finding(
                    .deliveredQuietly,
                    "It could not alert the user: \(why). It went to Notification Center without a banner or sound, and "
                        + "the user never expanded it.",
                    evidence: settingsEvidence,
                    fix: "Ask for full authorization at a moment the user sees the value (requestAuthorization with "
                        + ".alert), or invite them to turn banners on from UIApplication.openNotificationSettingsURLString."))
        }
        guard settings?.scheduledDeliverySetting == .enabled else { return findings }
        let timeSensitiveOff = level.level == .timeSensitive && settings?.timeSensitiveSetting == .disabled
        guard level.level == .active || level.level == .passive || timeSensitiveOff else { return findings }
        findings.append(
            Finding(
                .heldForSummary,
                "The user has Notification Summary on, and the notification's level was "
                    + "\(timeSensitiveOff ? "time-sensitive, counted as active" : level.level.rawValue): iOS held it for "
                    + "the scheduled summary rather than showing it at once.",
                evidence: settingsEvidence + [level.entry].compactMap { $0 },
                fix: "Send time-sensitive only for what cannot wait, with the Time Sensitive Notifications entitlement "
                    + "and the user's consent; everything else arrives with the summary."))
        if timeSensitiveOff {
            findings.append(
                Finding(
                    .timeSensitiveOff,
                    "The push was sent time-sensitive, but the user turned time-sensitive notifications off for the app, "
                        + "so it was held like any other.",
                    evidence: settingsEvidence + [level.entry].compactMap { $0 },
                    fix: "Nothing the app can change: the user decides. Keep time-sensitive for what matters, so that "
                        + "they keep it on."))
        }
        return findings
    }
}

extension Array where Element: Hashable {
    /// The elements, each once, in their first order.
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
