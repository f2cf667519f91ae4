/// The process that wrote a record (docs/protocol.md#bundles): the main app, its two extensions, or the push-sending backend.
public enum ProcessKind: String, Codable, Sendable, CaseIterable, Comparable {
    case app
    case service
    case content
    case server

    public static func < (lhs: ProcessKind, rhs: ProcessKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The kind of a bundle line (docs/protocol.md#bundles). Unknown kinds are kept, not rejected.
public enum RecordType: String, Codable, Sendable, CaseIterable {
    case manifest
    case event
    case log
    case config
}

/// How the content extension answered an action (`UNNotificationContentExtensionResponseOption`).
public enum ResponseOption: String, Codable, Sendable, CaseIterable {
    case doNotDismiss
    case dismiss
    case dismissAndForwardAction
}
