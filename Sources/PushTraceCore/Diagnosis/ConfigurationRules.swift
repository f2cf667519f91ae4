import PushTraceRecords

/// The category identifier that must match in three places, and the content extension's Info.plist:
/// `category_unregistered`, `category_not_handled`, `interaction_disabled`.
enum ConfigurationRules {
    static func findings(_ facts: Facts) -> [Finding] {
        var findings: [Finding] = []
        let appConfig = facts.config.app
        let contentConfig = facts.config.content
        let registered = appConfig?.record.categories?.map(\.id)
        let handled = contentConfig?.record.infoPlist?.categories

        if let category = facts.category, !category.isEmpty {
            if let registered, let appConfig, !registered.contains(category) {
                let hint = EditDistance.nearest(to: category, in: registered)
                findings.append(
                    Finding(
                        .categoryUnregistered,
                        "The push's category \"\(category)\" is not registered by the app"
                            + list(registered) + ", so iOS shows no action buttons and no custom card."
                            + (hint.map { " Did you mean \"\($0)\"?" } ?? ""),
                        evidence: facts.categoryEvidence + [appConfig],
                        fix: (hint.map { "Send category \"\($0)\", or register \"\(category)\"" } ?? "Register \"\(category)\"")
                            + " with UNUserNotificationCenter.setNotificationCategories at launch."))
            } else if let handled, let contentConfig, !handled.contains(category) {
                let hint = EditDistance.nearest(to: category, in: handled)
                findings.append(
                    Finding(
                        .categoryNotHandled,
                        "The content extension does not handle category \"\(category)\": its UNNotificationExtensionCategory is "
                            + handled.map { "\"\($0)\"" }.joined(separator: ", ") + ", so the default card shows instead."
                            + (hint.map { " Did you mean \"\($0)\"?" } ?? ""),
                        evidence: facts.categoryEvidence + [contentConfig],
                        fix: "Add \"\(category)\" to UNNotificationExtensionCategory in the content extension's Info.plist "
                            + "(NSExtension → NSExtensionAttributes)" + (hint.map { ", or send \"\($0)\"" } ?? "") + "."))
            }
        }
        if let contentConfig, contentConfig.record.interactiveControls == true,
            contentConfig.record.infoPlist?.userInteractionEnabled != true
        {
            findings.append(
                Finding(
                    .interactionDisabled,
                    "The content extension has interactive controls, but UNNotificationExtensionUserInteractionEnabled is "
                        + "not true, so taps on the card never reach them.",
                    evidence: [contentConfig],
                    fix: "Set UNNotificationExtensionUserInteractionEnabled to YES in the content extension's NSExtensionAttributes."))
        }
        return findings
    }

    private static func list(_ names: [String]) -> String {
        names.isEmpty ? " (it registers none)" : " (registered: " + names.joined(separator: ", ") + ")"
    }
}
