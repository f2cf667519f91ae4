/// Why the agent could not start or do what it was asked. Recording itself never throws: a step that cannot be
/// written is dropped rather than disturb the notification.
public enum AgentError: Error, CustomStringConvertible, Sendable, Equatable {
    /// `FileManager.containerURL(forSecurityApplicationGroupIdentifier:)` returned nil.
    case appGroupUnavailable(String)
    /// The container's `pushtrace` directory could not be created or opened.
    case containerUnusable(String, reason: String)
    /// The uploader's server URL or token is unusable.
    case badConfiguration(String)

    public var description: String {
        switch self {
        case .appGroupUnavailable(let group):
            "App Group '\(group)' has no container: add the App Groups capability with exactly this name to the app, "
                + "the service extension and the content extension (Signing & Capabilities), and check the spelling in each"
        case .containerUnusable(let path, let reason):
            "cannot use \(path) for pushtrace's files: \(reason)"
        case .badConfiguration(let message):
            message
        }
    }
}
