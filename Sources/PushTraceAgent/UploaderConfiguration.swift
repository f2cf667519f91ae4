import Foundation

/// Where and as what the app uploads its bundles.
public struct UploaderConfiguration: Sendable {
    /// The pushtrace server, e.g. `https://pushtrace.example.com` (bundles go to `/v1/bundles`).
    public var server: URL
    /// An ingest token for this app (`pushtrace token create --app … --scope ingest`).
    public var token: String
    /// The app's bundle identifier, as the server knows the app.
    public var appID: String
    /// e.g. `2.3.1`; by default the main bundle's `CFBundleShortVersionString`.
    public var appVersion: String?
    /// e.g. `45`; by default the main bundle's `CFBundleVersion`.
    public var build: String?
    /// e.g. `iOS 18.1`; by default the running system's.
    public var os: String?
    /// e.g. `iPhone15,2`; by default the device's hardware model.
    public var deviceModel: String?
    /// The most uncompressed bytes of records one bundle takes (default 4 MiB); more make several bundles.
    public var maxBundleBytes: Int64 = 4 << 20
    /// How many bundles refused as malformed (400, 413, 415) are kept aside for inspection (default 5).
    public var maxRejectedBundles = 5
    /// The longest wait between attempts at a bundle (default one hour).
    public var maxBackoff: TimeInterval = 3_600
    /// How long one request may take before it counts as failed (default 60 s).
    public var requestTimeout: TimeInterval = 60

    /// A configuration whose app version, build, system and device model, unless given, are found by the agent
    /// (``ClientDescription``): the delivery report's tables by version and device fill with no code of the app's.
    public init(
        server: URL, token: String, appID: String, appVersion: String? = nil, build: String? = nil,
        os: String? = nil, deviceModel: String? = nil
    ) {
        self.init(
            server: server, token: token, appID: appID, appVersion: appVersion, build: build, os: os,
            deviceModel: deviceModel, bundleInfo: Bundle.main.infoDictionary)
    }

    /// As above, with the bundle's `Info.plist` given (tests).
    init(
        server: URL, token: String, appID: String, appVersion: String?, build: String?, os: String?,
        deviceModel: String?, bundleInfo: [String: Any]?
    ) {
        self.server = server
        self.token = token
        self.appID = appID
        self.appVersion = appVersion ?? ClientDescription.appVersion(bundleInfo)
        self.build = build ?? ClientDescription.build(bundleInfo)
        self.os = os ?? ClientDescription.os
        self.deviceModel = deviceModel ?? ClientDescription.deviceModel
    }

    /// Throws ``AgentError/badConfiguration(_:)`` for a server that is not an http(s) URL with a host, or an empty
    /// token or app ID: mistakes that would otherwise only show as uploads failing for ever. Touches no disk.
    public func validate() throws {
        guard ["http", "https"].contains(server.scheme?.lowercased() ?? ""), server.host?.isEmpty == false else {
            throw AgentError.badConfiguration("the pushtrace server \(server) is not an http:// or https:// URL with a host")
        }
        guard !token.isEmpty else {
            throw AgentError.badConfiguration("the ingest token is empty: create one with pushtrace token create --app … --scope ingest")
        }
        guard !appID.isEmpty else { throw AgentError.badConfiguration("the app ID is empty") }
    }
}

/// What one `Uploader.upload()` did.
public struct UploadReport: Sendable, Equatable {
    /// Bundles written from new records by this call.
    public var packed = 0
    /// Bundles the server acknowledged (and that were deleted), duplicates included.
    public var sent = 0
    /// Of those, bundles the server already had (an earlier attempt was stored but its answer lost).
    public var duplicates = 0
    /// Bundles refused as malformed and set aside in `rejected/`.
    public var setAside = 0
    /// Bundles still waiting in the outbox.
    public var waiting = 0
    /// When the next waiting bundle may be tried (Unix epoch ms), if any waits.
    public var nextAttemptAt: Int64?
    /// The last failure seen, in words.
    public var lastError: String?

    /// A report of nothing done.
    public init() {}

    init(lastError: String) { self.lastError = lastError }
}
