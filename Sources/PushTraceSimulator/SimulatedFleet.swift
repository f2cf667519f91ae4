import PushTraceCore
import PushTraceRecords

/// An app of the simulated vendor: its categories, their actions, and its App Group.
struct SimulatedApp {
    let id: String
    let categories: [(id: String, actions: [String])]
    let appGroup: String
    let versions: [String]
    /// A host the backend puts attachment images on.
    let imageHost: String

    static let all: [SimulatedApp] = [
        SimulatedApp(
            id: "net.rorklab.dailypick",
            categories: [("DAILY_PICK", ["SAVE_PICK", "SHUFFLE_PICK"]), ("STREAK_REMINDER", ["OPEN_STREAK"])],
            appGroup: "group.net.rorklab.dailypick", versions: ["2.3.0", "2.3.1", "2.4.0"],
            imageHost: "img.dailypick.net"),
        SimulatedApp(
            id: "com.example.newsbrief",
            categories: [("BREAKING_NEWS", ["READ_LATER", "SHARE_STORY"]), ("MORNING_DIGEST", ["OPEN_DIGEST"])],
            appGroup: "group.com.example.newsbrief", versions: ["5.12.0", "5.13.2"],
            imageHost: "cdn.newsbrief.example.com"),
        SimulatedApp(
            id: "io.acme.fitlog",
            categories: [("WORKOUT_DONE", ["LOG_MOOD", "VIEW_STATS"]), ("GOAL_REACHED", ["SHARE_GOAL"])],
            appGroup: "group.io.acme.fitlog", versions: ["1.8.4", "1.9.0"],
            imageHost: "media.fitlog.io"),
    ]
}

/// How a simulated device's configuration departs from a healthy one; each produces one cause of docs/protocol.md#causes.
enum DeviceFlaw: CaseIterable {
    case none
    /// Its content extension's UNNotificationExtensionCategory lacks the app's second category.
    case plistDrift
    /// Its content extension has interactive controls but user interaction is not enabled.
    case interactionDisabled
    /// Its main app reads shared state from a differently named App Group.
    case appGroupDrift
    /// Never uploads: the pushes sent to it await its logs.
    case offline
}

/// A simulated device of one app.
struct SimulatedDevice {
    let app: SimulatedApp
    let id: String
    let model: String
    let os: String
    let appVersion: String
    let build: String
    /// How far the device clock is ahead of true time.
    let skewMs: Int64
    let flaw: DeviceFlaw
    /// The user's notification settings its app records; none for most simulated devices, whose agents predate them.
    var settings: NotificationSettings? = nil

    static let models = ["iPhone15,2", "iPhone15,3", "iPhone16,1", "iPhone14,5", "iPhone17,1", "iPhone13,2"]
    static let systems = ["iOS 17.6.1", "iOS 18.0.1", "iOS 18.1", "iOS 18.2", "iOS 26.0"]

    /// Devices are identified per app (two apps may see the same `device_id`).
    var key: String { app.id + "/" + id }

    /// The App Group the main app uses for shared state.
    var appSuite: String { flaw == .appGroupDrift ? app.appGroup + ".shared" : app.appGroup }

    /// The three config records (docs/protocol.md#config-records) as this device's processes write them.
    func configLines(at ts: Int64) -> [(ProcessKind, String)] {
        let categories: [JSONValue] = app.categories.map { category in
            .object(["id": .string(category.id), "actions": .array(category.actions.map(JSONValue.string))])
        }
        let handled = flaw == .plistDrift ? [app.categories[0].id] : app.categories.map(\.id)
        let plist: JSONValue = .object([
            "UNNotificationExtensionCategory": handled.count == 1 ? .string(handled[0]) : .array(handled.map(JSONValue.string)),
            "UNNotificationExtensionInitialContentSizeRatio": 0.66,
            "UNNotificationExtensionDefaultContentHidden": true,
            "UNNotificationExtensionUserInteractionEnabled": .bool(flaw != .interactionDisabled),
        ])
        return [
            (
                .app,
                JSONLine(
                    fields: [
                        ("type", "config"), ("ts", .int(ts)), ("process", "app"), ("app_group", .string(appSuite)),
                        ("categories", .array(categories)), ("notification_settings", settings?.jsonValue),
                    ]
                ).text
            ),
            (
                .service,
                JSONLine([
                    "type": "config", "ts": .int(ts), "process": "service",
                    "app_group": .string(app.appGroup),
                ]).text
            ),
            (
                .content,
                JSONLine([
                    "type": "config", "ts": .int(ts), "process": "content", "app_group": .string(app.appGroup),
                    "interactive_controls": true, "info_plist": plist,
                ]).text
            ),
        ]
    }
}
