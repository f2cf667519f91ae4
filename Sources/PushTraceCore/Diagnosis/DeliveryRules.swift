import PushTraceRecords

/// Whether the device got the push and what the user did: `not_delivered` (or what APNs's rules make of it),
/// `awaiting_device_logs`, `not_expanded` (or what the settings and APNs's rules make of it),
/// `forwarded_action_unhandled`.
enum DeliveryRules {
    static func findings(_ facts: Facts, settings: DiagnosisSettings) -> [Finding] {
        if facts.deviceEntries.isEmpty {
            guard let sent = facts.sent, !facts.all(.pushAPNsResponse).contains(where: { ($0.record.status ?? 200) != 200 })
            else { return [] }
            let accepted = facts.all(.pushAPNsResponse).suffix(1)
            if sent.record.deviceID != nil, let lastSeen = facts.input.deviceLastSeen,
                lastSeen >= sent.ts + settings.notDeliveredAfterMs
            {
                let refined = APNsRules.undeliveredFindings(facts, sent: sent, accepted: Array(accepted))
                guard refined.isEmpty else { return refined }
                return [
                    Finding(
                        .notDelivered,
                        "APNs accepted the push, and device \(sent.record.deviceID ?? "?") has since uploaded records from "
                            + "\(minutes(lastSeen - sent.ts)) later, yet none mention this notification: it never arrived.",
                        evidence: [sent] + accepted,
                        fix: "Check the device's token is current and notifications are allowed; a push collapsed or "
                            + "expired (apns-expiration) in APNs also never arrives.")
                ]
            }
            return [
                Finding(
                    .awaitingDeviceLogs,
                    "APNs accepted the push; no device has reported anything about it yet.",
                    evidence: [sent] + accepted,
                    fix: "Wait for the app's next upload (it uploads when launched), or open the app on the device.")
            ]
        }
        var findings: [Finding] = []
        let expanded = facts.has(.contentReceived) || facts.has(.contentAction)
        let refined = expanded ? [] : APNsRules.replacedFindings(facts) + SettingsRules.quietFindings(facts)
        findings += refined
        if !expanded, refined.isEmpty {
            findings.append(
                Finding(
                    .notExpanded,
                    "The notification was delivered, but the user never expanded it, so the custom card was not shown.",
                    evidence: Array(facts.deviceEntries.suffix(1)), fix: "Nothing is broken."))
        }
        let responses = facts.all(.appResponse)
        for action in facts.all(.contentAction) where action.record.response == ResponseOption.dismissAndForwardAction.rawValue {
            if !responses.contains(where: { $0.ts >= action.ts }) {
                findings.append(
                    Finding(
                        .forwardedActionUnhandled,
                        "The content extension forwarded action \"\(action.record.action ?? "?")\" to the app, but the app's "
                            + "response handler never ran.",
                        evidence: [action],
                        fix: "Set UNUserNotificationCenter's delegate before the app finishes launching, and implement "
                            + "userNotificationCenter(_:didReceive:withCompletionHandler:)."))
                break
            }
        }
        return findings
    }

    private static func minutes(_ ms: Int64) -> String {
        ms >= 172_800_000
            ? "\(ms / 86_400_000) days"
            : ms >= 3_600_000 ? "\(ms / 3_600_000) h \((ms % 3_600_000) / 60_000) min" : "\(ms / 60_000) min"
    }
}
