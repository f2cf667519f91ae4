import PushTraceCore

/// One row of the per-notification summary (`notification` table).
public struct NotificationSummary: Codable, Sendable, Hashable {
    public var appID: String
    public var notificationID: String
    public var deviceID: String?
    public var category: String?
    public var appVersion: String?
    public var os: String?
    public var firstTs: Int64?
    public var lastTs: Int64?
    public var sentTs: Int64?
    public var apnsStatus: Int64?
    public var serviceMs: Int64?
    public var actions: Int
    public var records: Int
    /// The primary cause; nil until settled.
    public var cause: String?

    package init(
        appID: String, notificationID: String, deviceID: String?, category: String?, appVersion: String?,
        os: String?, firstTs: Int64?, lastTs: Int64?, sentTs: Int64?, apnsStatus: Int64?, serviceMs: Int64?,
        actions: Int, records: Int, cause: String?
    ) {
        self.appID = appID
        self.notificationID = notificationID
        self.deviceID = deviceID
        self.category = category
        self.appVersion = appVersion
        self.os = os
        self.firstTs = firstTs
        self.lastTs = lastTs
        self.sentTs = sentTs
        self.apnsStatus = apnsStatus
        self.serviceMs = serviceMs
        self.actions = actions
        self.records = records
        self.cause = cause
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case appID = "app_id", notificationID = "notification_id", deviceID = "device_id", category
        case appVersion = "app_version", os, firstTs = "first_ts", lastTs = "last_ts", sentTs = "sent_ts"
        case apnsStatus = "apns_status", serviceMs = "service_ms", actions, records, cause
    }
}
