import PushTraceRecords

/// The main app's steps (docs/protocol.md#events): `recorder.app.willPresent(…)`.
public struct AppSteps: Sendable {
    let recorder: Recorder

    /// `userNotificationCenter(_:willPresent:withCompletionHandler:)`: shown while the app was in the foreground.
    public func willPresent(_ notificationID: String, options: [String]? = nil) {
        recorder.event(
            .appWillPresent, notificationID: notificationID,
            ["options": options.map { .array($0.map(JSONValue.string)) }])
    }

    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)`: the app's response handler ran for `action`
    /// (`com.apple.UNNotificationDefaultActionIdentifier` when the user tapped the notification itself).
    public func response(_ notificationID: String, action: String) {
        recorder.event(.appResponse, notificationID: notificationID, ["action": .string(action)])
    }
}

extension Recorder {
    /// The main app's steps.
    public var app: AppSteps { AppSteps(recorder: self) }
}
