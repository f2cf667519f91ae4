import Foundation
import PushTraceRecords

extension Recorder {
    /// Records what this process is configured with (docs/protocol.md): the App Group it uses; for the app, the categories
    /// it registers and the user's notification settings; for the content extension, its `NSExtensionAttributes` and
    /// whether it handles actions.
    ///
    /// The line is written when the configuration differs from the one this process last recorded, and the uploader
    /// repeats the latest one in every bundle, so the server always knows the configuration in force. Comparing with
    /// the saved one reads a file: like every disk step, that runs on the agent's queue (see ``Recorder``).
    public func config(
        appGroup: String?, categories: [CategoryConfig]? = nil,
        extensionAttributes: ContentExtensionPlist? = nil, interactiveControls: Bool? = nil,
        notificationSettings: NotificationSettings? = nil
    ) {
        let fields: [(String, JSONValue?)] = [
            ("app_group", appGroup.map(JSONValue.string)),
            ("categories", categories.map { .array($0.map(\.jsonValue)) }),
            ("interactive_controls", interactiveControls.map(JSONValue.bool)),
            ("info_plist", extensionAttributes?.jsonValue),
            ("notification_settings", notificationSettings.flatMap { $0.isEmpty ? nil : $0.jsonValue }),
        ]
        let line = encode(.config, fields)
        onDisk { [self] in saveConfig(line) }
    }

    /// Writes the config line unless it only repeats the saved one. On the agent's queue.
    private func saveConfig(_ line: [UInt8]) {
        guard let container = startIfNeeded() else { return appendLocked(line) }  // counted as unwritten
        let url = container.state.appendingPathComponent("config-\(process.rawValue).ndjson")
        // The same configuration at a later launch is not new: compare everything but the time.
        func withoutTime(_ data: Data?) -> NSDictionary? {
            guard let data, var object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            object["ts"] = nil
            return NSDictionary(dictionary: object)
        }
        if let saved = withoutTime(try? Data(contentsOf: url)), saved.isEqual(withoutTime(Data(line))) { return }
        appendLocked(line)
        try? Data(line).writeProtected(to: url)
    }
}

extension CategoryConfig {
    var jsonValue: JSONValue {
        .object(["id": .string(id)].merging(actions.map { ["actions": .array($0.map(JSONValue.string))] } ?? [:]) { $1 })
    }
}

extension ContentExtensionPlist {
    /// The attributes under `NSExtension` → `NSExtensionAttributes` of an extension's Info.plist, as
    /// `Bundle.main.infoDictionary` gives them; nil when the dictionary has none.
    public init?(infoDictionary: [String: Any]) {
        guard let attributes = (infoDictionary["NSExtension"] as? [String: Any])?["NSExtensionAttributes"] as? [String: Any]
        else { return nil }
        let category = attributes["UNNotificationExtensionCategory"]
        self.init(
            categories: (category as? String).map { [$0] } ?? category as? [String],
            initialContentSizeRatio: (attributes["UNNotificationExtensionInitialContentSizeRatio"] as? NSNumber)?.doubleValue,
            defaultContentHidden: attributes["UNNotificationExtensionDefaultContentHidden"] as? Bool,
            userInteractionEnabled: attributes["UNNotificationExtensionUserInteractionEnabled"] as? Bool)
    }

    var jsonValue: JSONValue {
        var members: [String: JSONValue] = [:]
        members["UNNotificationExtensionCategory"] = categories.map { .array($0.map(JSONValue.string)) }
        members["UNNotificationExtensionInitialContentSizeRatio"] = initialContentSizeRatio.map(JSONValue.double)
        members["UNNotificationExtensionDefaultContentHidden"] = defaultContentHidden.map(JSONValue.bool)
        members["UNNotificationExtensionUserInteractionEnabled"] = userInteractionEnabled.map(JSONValue.bool)
        return .object(members)
    }
}
