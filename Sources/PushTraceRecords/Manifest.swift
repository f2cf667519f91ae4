/// The first line of every bundle (docs/protocol.md#bundles): who uploaded it, and when by their clock.
public struct Manifest: Codable, Sendable, Hashable {
    public var type: String?
    public var schema: Int?
    /// Makes an upload idempotent per app.
    public var bundleID: String?
    public var appID: String?
    public var appVersion: String?
    public var build: String?
    public var os: String?
    public var deviceModel: String?
    /// The device, per app; omitted or `"server"` for the push-sending backend.
    public var deviceID: String?
    /// The uploader's clock at upload, Unix epoch milliseconds.
    public var uploadedAt: Int64?
    public var sdk: String?

    public init(
        bundleID: String, appID: String, appVersion: String? = nil, build: String? = nil, os: String? = nil,
        deviceModel: String? = nil, deviceID: String? = nil, uploadedAt: Int64? = nil, sdk: String? = nil
    ) {
        self.type = RecordType.manifest.rawValue
        self.schema = Int(PushTraceVersion.bundleSchema)
        self.bundleID = bundleID
        self.appID = appID
        self.appVersion = appVersion
        self.build = build
        self.os = os
        self.deviceModel = deviceModel
        self.deviceID = deviceID
        self.uploadedAt = uploadedAt
        self.sdk = sdk
    }

    /// Whether the bundle comes from the push-sending backend rather than a device.
    public var isFromServer: Bool { deviceID == nil || deviceID == "server" }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case type, schema
        case bundleID = "bundle_id"
        case appID = "app_id"
        case appVersion = "app_version"
        case build, os
        case deviceModel = "device_model"
        case deviceID = "device_id"
        case uploadedAt = "uploaded_at"
        case sdk
    }
}
