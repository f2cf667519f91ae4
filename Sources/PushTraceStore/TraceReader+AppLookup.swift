extension TraceReader {
    /// The app notification `notificationID` belongs to: `app` when the caller named one, else the one app it is
    /// stored for, or nil when none. Throws ``StoreError/ambiguousNotification(_:apps:)`` when several.
    public func app(_ app: String?, ofNotification notificationID: String) async throws -> String? {
        if let app { return app }
        let apps = try await apps(forNotification: notificationID)
        guard apps.count <= 1 else { throw StoreError.ambiguousNotification(notificationID, apps: apps) }
        return apps.first
    }

    /// Throws ``StoreError/unknownApp(_:known:)`` when no notification of `app` is stored. Asked only when an
    /// answer came back empty, so a known app costs nothing.
    public func requireKnownApp(_ app: String) async throws {
        let apps = try await appIDs()
        guard apps.contains(app) else { throw StoreError.unknownApp(app, known: apps) }
    }
}
