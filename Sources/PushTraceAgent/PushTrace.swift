import Foundation
import PushTraceRecords

/// The agent in one call: ``configure(appGroup:server:token:appID:)`` in each of the three processes, then
/// ``recorder`` records and the app uploads (docs/agent.md).
///
/// Configuring is cheap and idempotent, and touches no disk: the App Group lookup, the folders, this launch's file
/// and the clean-up of earlier launches all run later, on the agent's own queue (see ``Recorder``). The process
/// (app, service extension, content extension) is read from the bundle's `Info.plist`. A configuration the
/// uploader refuses is reported (the unified log, fault) and turns uploading off, never recording.
public enum PushTrace {
    /// This agent's version, which is the repository's release tag an app depends on (CHANGELOG.md).
    public static let version = "1.1.0"

    /// What all three processes of an app share: the App Group, and the server its records go to.
    public struct Configuration: Sendable, Hashable {
        /// The App Group all three targets have in *Signing & Capabilities*, e.g. `group.net.rorklab.dailypick`.
        public var appGroup: String
        /// The pushtrace server, e.g. `https://pushtrace.example.com`.
        public var server: URL
        /// An ingest token for this app (`pushtrace token create --app … --scope ingest`).
        public var token: String
        /// The app's bundle identifier, as the server knows the app; by default the app's own (in an extension,
        /// its bundle identifier less the last component, as Apple requires extensions to be named).
        public var appID: String?

        public init(appGroup: String, server: URL, token: String, appID: String? = nil) {
            self.appGroup = appGroup
            self.server = server
            self.token = token
            self.appID = appID
        }
    }

    /// Sets the agent up for this process: which of the three it is comes from its `Info.plist`. Returns at once;
    /// every disk step runs later on the agent's queue. Called again with the same configuration it does nothing;
    /// with another, it reports the mistake and keeps the first.
    public static func configure(appGroup: String, server: URL, token: String, appID: String? = nil) {
        configure(Configuration(appGroup: appGroup, server: server, token: token, appID: appID))
    }

    /// ``configure(appGroup:server:token:appID:)`` with the configuration as one value, which a file shared by the
    /// three targets can declare once.
    public static func configure(_ configuration: Configuration) {
        let info = Bundle.main.infoDictionary ?? [:]
        Setup.shared.configure(
            configuration, process: ProcessKind.running(info), place: .appGroup(configuration.appGroup), info: info)
    }

    /// As ``configure(_:)``, writing in `directory` rather than an App Group container, as `process`: Linux, tests
    /// and tools on a Mac.
    public static func configure(_ configuration: Configuration, directory: URL, process: ProcessKind) {
        Setup.shared.configure(configuration, process: process, place: .directory(directory), info: Bundle.main.infoDictionary ?? [:])
    }

    /// The configuration in force; nil until ``configure(appGroup:server:token:appID:)`` is called.
    public static var configuration: Configuration? { Setup.shared.configured }

    /// This process's recorder; nil until ``configure(appGroup:server:token:appID:)`` is called. Its calls never
    /// wait for disk on the main thread.
    public static var recorder: Recorder? { Setup.shared.recorder }

    /// Packs new records and sends what is due (``Uploader/upload()``), off the main thread; nil when the agent is
    /// not configured, or its upload configuration was refused.
    @discardableResult
    public static func upload() async -> UploadReport? {
        guard let uploader = await Setup.shared.uploader() else { return nil }
        return await uploader.upload()
    }

    /// The app's uploader, made on first use off the calling thread (it needs the container); nil as for
    /// ``upload()``.
    public static func uploader() async -> Uploader? { await Setup.shared.uploader() }
}

extension ProcessKind {
    /// The process an `Info.plist` describes: a notification service or content extension by its extension point,
    /// else the app.
    static func running(_ info: [String: Any]) -> ProcessKind {
        switch (info["NSExtension"] as? [String: Any])?["NSExtensionPointIdentifier"] as? String {
        case "com.apple.usernotifications.service": .service
        case "com.apple.usernotifications.content-extension": .content
        default: .app
        }
    }
}

/// The configuration, recorder and uploader ``PushTrace`` keeps: one per process is the point, so this is
/// process-wide, made once and guarded by a lock.
final class Setup: @unchecked Sendable {
    static let shared = Setup()
    private let lock = NSLock()
    private var configuration: Configured?
    private var made: Uploader?

    private struct Configured {
        let value: PushTrace.Configuration
        let recorder: Recorder
        let upload: UploaderConfiguration?
    }

    var recorder: Recorder? { lock.withLock { configuration?.recorder } }
    var configured: PushTrace.Configuration? { lock.withLock { configuration?.value } }

    func configure(_ value: PushTrace.Configuration, process: ProcessKind, place: ContainerPlace, info: [String: Any]) {
        lock.withLock {
            if let configuration {
                if configuration.value != value {
                    _ = AgentError.badConfiguration(
                        "PushTrace.configure was called again with another configuration; the first stays in force"
                    ).reported()
                }
                return
            }
            let key: String
            switch place {
            case .directory(let url): key = url.appendingPathComponent("pushtrace", isDirectory: true).path
            default: key = value.appGroup
            }
            // The same recorder as Recorder.shared(_:appGroup:) gives for this process and App Group.
            let recorder = SharedRecorders.recorder(process, key) { Recorder(process: process, place: place) }
            let appID = value.appID ?? Self.appID(info: info, process: process)
            var upload: UploaderConfiguration? = UploaderConfiguration(
                server: value.server, token: value.token, appID: appID ?? "", appVersion: nil, build: nil, os: nil,
                deviceModel: nil, bundleInfo: info)
            do {
                try upload?.validate()
            } catch {
                // Reported; recording goes on, only uploading is off.
                _ = ((error as? AgentError) ?? AgentError.badConfiguration("\(error)")).reported()
                upload = nil
            }
            if process == .service, let upload {
                // For users who never open the app: the extension sends its own records after each delivery.
                recorder.uploadsAfterDelivery(upload)
            }
            configuration = Configured(value: value, recorder: recorder, upload: upload)
        }
    }

    /// The app's uploader, made once; on the agent's queue, not the caller's thread, as it needs the container.
    func uploader() async -> Uploader? {
        guard let (configured, made) = lock.withLock({ configuration.map { ($0, self.made) } }) else { return nil }
        if let made { return made }
        guard let upload = configured.upload else { return nil }
        let recorder = configured.recorder
        let container: AgentContainer? = await withCheckedContinuation { continuation in
            Recorder.disk.async { continuation.resume(returning: recorder.startIfNeeded()) }
        }
        guard let container, let uploader = try? Uploader(configuration: upload, container: container, recorder: recorder) else {
            return nil
        }
        return lock.withLock {
            if let made = self.made { return made }
            self.made = uploader
            return uploader
        }
    }

    /// The app's bundle identifier: the main bundle's, less its last component in an extension (Apple requires an
    /// extension's to start with its app's and a dot).
    static func appID(info: [String: Any], process: ProcessKind) -> String? {
        guard let identifier = info["CFBundleIdentifier"] as? String, !identifier.isEmpty else { return nil }
        guard process != .app, let dot = identifier.lastIndex(of: ".") else { return identifier }
        return String(identifier[..<dot])
    }
}
