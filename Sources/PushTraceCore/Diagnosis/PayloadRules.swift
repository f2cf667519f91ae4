import PushTraceRecords

/// What the backend and APNs did with the push: `apns_rejected`, `alert_missing`, `mutable_content_missing`.
enum PayloadRules {
    static func findings(_ facts: Facts) -> [Finding] {
        var findings: [Finding] = []
        if let rejected = facts.all(.pushAPNsResponse).first(where: { ($0.record.status ?? 200) != 200 }) {
            let status = rejected.record.status ?? 0
            let reason = rejected.record.reason
            findings.append(
                Finding(
                    .apnsRejected,
                    "APNs refused the push with HTTP \(status)\(reason.map { " (\($0))" } ?? ""); it never reached the device.",
                    evidence: [rejected], fix: fix(forAPNsReason: reason, status: status)))
        }
        guard let sent = facts.sent else { return findings }
        if sent.record.hasAlert == false {
            findings.append(
                Finding(
                    .alertMissing,
                    "The push carried no alert, so iOS displays nothing and runs neither extension.",
                    evidence: [sent],
                    fix: "Put an `alert` (title and body) in `aps`; a push without one is a silent background push."))
        }
        if sent.record.mutableContent == false {
            findings.append(
                Finding(
                    .mutableContentMissing,
                    "The push lacked `mutable-content: 1`, so the service extension never ran (no image, no rewrite).",
                    evidence: [sent], fix: "Add \"mutable-content\": 1 to `aps` for every push the service extension must see."))
        }
        return findings
    }

    static func fix(forAPNsReason reason: String?, status: Int64) -> String {
        switch reason {
        case "BadDeviceToken":
            return "The token does not belong to this APNs environment: send development builds' tokens to "
                + "api.sandbox.push.apple.com and App Store/TestFlight tokens to api.push.apple.com."
        case "Unregistered", "ExpiredToken":
            return "The app is no longer registered on that device; stop sending to this token and drop it."
        case "PayloadTooLarge":
            return "Keep the payload within 4096 bytes: send an image URL for the service extension to download, not data."
        case "BadTopic", "TopicDisallowed", "DeviceTokenNotForTopic", "MissingTopic":
            return "Set `apns-topic` to the app's bundle ID, and use a key or certificate of the same team."
        case "ExpiredProviderToken", "InvalidProviderToken", "MissingProviderToken":
            return "Sign a fresh provider JWT (reuse it for 20–60 minutes) with the right key ID and team ID."
        case "TooManyRequests", "TooManyProviderTokenUpdates":
            return "Send fewer pushes to this device, and back off before retrying."
        default:
            return status >= 500
                ? "APNs failed on its side; retry with backoff."
                : "Read APNs' reason in the response and fix the request it names."
        }
    }
}
