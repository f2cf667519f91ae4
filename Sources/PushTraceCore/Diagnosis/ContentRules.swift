import PushTraceRecords

/// The Notification Content Extension and the state it shares: `content_crashed`, `completion_not_called`,
/// `dismissed_before_update`, `app_group_mismatch`.
enum ContentRules {
    static func findings(_ facts: Facts, settings: DiagnosisSettings) -> [Finding] {
        var findings: [Finding] = []
        if let exit = facts.first(.contentAbnormalExit) {
            let footprint = exit.record.lastFootprintBytes.map { " (last memory footprint \(megabytes($0)))" } ?? ""
            findings.append(
                Finding(
                    .contentCrashed,
                    "The content extension ended without finishing\(footprint), often an oversized image decoded whole in "
                        + "the memory-limited extension.",
                    evidence: [exit] + facts.all(.contentImage).suffix(1),
                    fix: "Downsample images to the card's size (CGImageSourceCreateThumbnailAtIndex) before showing them."))
        }
        if let timeout = facts.first(.contentCompletionTimeout) {
            findings.append(
                Finding(
                    .completionNotCalled,
                    "The completion handler of action \"\(timeout.record.action ?? "?")\" was not called "
                        + "(waited \(seconds(timeout.record.waitedMs ?? 0))), so the button looked dead.",
                    evidence: [timeout],
                    fix: "Call the completion handler of didReceive(_:completionHandler:) on every path, errors included."))
        }
        if let dismissed = dismissedBeforeUpdate(facts, window: settings.dismissWindowMs) {
            findings.append(dismissed)
        }
        if let mismatch = appGroupMismatch(facts) { findings.append(mismatch) }
        return findings
    }

    private static func dismissedBeforeUpdate(_ facts: Facts, window: Int64) -> Finding? {
        let writes = facts.all(.sharedWrite)
        for action in facts.all(.contentAction) where action.record.response == ResponseOption.dismiss.rawValue {
            guard let write = writes.last(where: { action.ts - $0.ts >= 0 && action.ts - $0.ts <= window }) else { continue }
            return Finding(
                .dismissedBeforeUpdate,
                "Action \"\(action.record.action ?? "?")\" saved its change (\(write.record.key ?? "shared state") in "
                    + "\(write.record.suite ?? "?")) and answered .dismiss \(action.ts - write.ts) ms later, so the card "
                    + "closed before it could show the update.",
                evidence: [write, action],
                fix: "Answer .doNotDismiss, update the card, and dismiss later (extensionContext?.dismissNotificationContentExtension()).")
        }
        return nil
    }

    private static func appGroupMismatch(_ facts: Facts) -> Finding? {
        let writes = facts.all(.sharedWrite)
        for read in facts.all(.sharedRead) where read.record.found == false {
            guard
                let write = writes.first(where: {
                    $0.record.process != read.record.process && $0.record.suite != read.record.suite
                        && ($0.record.key == nil || read.record.key == nil || $0.record.key == read.record.key)
                })
            else { continue }
            let configs = facts.config.all
            let groups = Set(configs.compactMap(\.record.appGroup))
            return Finding(
                .appGroupMismatch,
                "The \(write.record.process ?? "?") process wrote \(write.record.key.map { "\"\($0)\"" } ?? "shared state") "
                    + "to \"\(write.record.suite ?? "?")\", but the \(read.record.process ?? "?") process read it from "
                    + "\"\(read.record.suite ?? "?")\" and found nothing."
                    + (groups.count > 1
                        ? " Their configs name different App Groups: " + groups.sorted().joined(separator: ", ") + "." : ""),
                evidence: [write, read] + (groups.count > 1 ? configs : []),
                fix: "Use one App Group identifier in every target: the same suite name in UserDefaults(suiteName:) and "
                    + "the same group in each target's App Groups entitlement.")
        }
        return nil
    }
}
