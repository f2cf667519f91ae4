import Foundation

/// The data-protection class of everything the agent writes: `completeUntilFirstUserAuthentication`.
///
/// A notification service extension runs while the phone is locked, which is when most pushes arrive; under
/// `complete` every record it writes then would fail. The files hold no payload content (identifiers, timings,
/// sizes, statuses), so the class that stays readable from the first unlock after a reboot is the right one. Before
/// that first unlock nothing in the container can be written at all: those records are counted as dropped.
enum FileProtection {
    static let agentClass = FileProtectionType.completeUntilFirstUserAuthentication

    /// Sets the class on a file or directory the agent created. A directory's class is also the default of the files
    /// created in it; setting it on each file as well covers containers made by an earlier version.
    static func apply(to url: URL) {
        #if canImport(Darwin)
            try? FileManager.default.setAttributes([.protectionKey: agentClass], ofItemAtPath: url.path)
        #endif
    }

    /// Options for `Data.write(to:options:)` of the agent's small state files.
    static var writing: Data.WritingOptions {
        #if canImport(Darwin)
            [.atomic, .completeFileProtectionUntilFirstUserAuthentication]
        #else
            [.atomic]
        #endif
    }
}

extension Data {
    /// Writes the agent's state atomically, with the agent's protection class.
    func writeProtected(to url: URL) throws {
        try write(to: url, options: FileProtection.writing)
    }
}
