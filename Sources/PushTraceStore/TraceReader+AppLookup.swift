/// Why a notification's app, or an app named by a caller, could not be told. The CLI and the server both answer
/// with these words (the CLI adds how to say which with `--app`, the server with `?app=`).
public enum AppLookupError: Error, Equatable, Sendable {
    /// The notification ID is stored for several apps: the caller must say which.
    case ambiguous(notificationID: String, apps: [String])
    /// No notification of this app is stored (a misspelt bundle ID answers nothing, silently, otherwise).
    case unknownApp(String, known: [String])

    /// The sentence, without the "say which" advice that differs between the CLI and the server.
    public var message: String {
        switch self {
        case .ambiguous(let id, let apps):
            "notification \(id) is stored for \(apps.count) apps: " + apps.joined(separator: ", ")
        case .unknownApp(let app, let known):
            "no notifications of app \(app) are stored; apps: " + (known.isEmpty ? "none yet" : known.joined(separator: ", "))
        }
    }
}

extension TraceReader {
    /// The app notification `notificationID` belongs to: `app` when the caller named one, else the one app it is
    /// stored for, or nil when none. Throws ``AppLookupError/ambiguous(notificationID:apps:)`` when several.
    public func app(_ app: String?, ofNotification notificationID: String) throws -> String? {
        if let app { return app }
        let apps = try apps(forNotification: notificationID)
        guard apps.count <= 1 else { throw AppLookupError.ambiguous(notificationID: notificationID, apps: apps) }
        return apps.first
    }

    /// Throws ``AppLookupError/unknownApp(_:known:)`` when no notification of `app` is stored. Asked only when an
    /// answer came back empty, so a known app costs nothing.
    public func requireKnownApp(_ app: String) throws {
        let apps = try appIDs()
        guard apps.contains(app) else { throw AppLookupError.unknownApp(app, known: apps) }
    }
}
