import Foundation

#if canImport(os)
    import os
#endif

/// Where the agent keeps its files: `pushtrace/` inside the App Group container the app and its extensions share.
///
/// ```
/// pushtrace/records/   the file each running process appends to (one per launch)
/// pushtrace/sealed/    files whose process rolled them over or has ended
/// pushtrace/outbox/    bundles written and waiting to be sent (deleted after a 200)
/// pushtrace/rejected/  bundles the server refused as malformed (400, 413, 415), kept for a developer to look at
/// pushtrace/state/     the device ID, the upload cursors, each process's latest config, in-flight markers
/// ```
///
/// Every folder and file gets the protection class `completeUntilFirstUserAuthentication` (see ``FileProtection``).
public struct AgentContainer: Sendable, Hashable {
    /// The `pushtrace` directory.
    public let root: URL

    /// A container at any directory (Linux, tests, a Mac tool). The `pushtrace` directory is created inside it.
    ///
    /// Throws ``AgentError/containerUnusable(_:reason:)`` when a folder cannot be created: a read-only or full disk,
    /// or (before the first unlock after a reboot) a container the system keeps locked.
    public init(directory: URL) throws {
        root = directory.appendingPathComponent("pushtrace", isDirectory: true)
        for folder in [root, records, sealed, outbox, rejected, state] {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                FileProtection.apply(to: folder)
            } catch {
                throw AgentError.containerUnusable(folder.path, reason: "\(error)").reported()
            }
        }
    }

    #if canImport(Darwin)
        /// The shared container of App Group `appGroup` (e.g. `group.net.rorklab.dailypick`).
        ///
        /// Throws ``AgentError/appGroupUnavailable(_:)`` when the system has no container for that name: the App Groups
        /// capability is missing from this target, or the name differs from the other targets' (the commonest reason a
        /// rich notification silently loses its shared state). The error is also logged with `os_log` (fault).
        public init(appGroup: String) throws {
            guard let url = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: appGroup) else {
                throw AgentError.appGroupUnavailable(appGroup).reported()
            }
            try self.init(directory: url)
        }
    #endif

    /// A container whose folders are not made yet: ``ContainerPlace`` makes them on the agent's queue.
    init(unpreparedAt root: URL) { self.root = root }

    var records: URL { root.appendingPathComponent("records", isDirectory: true) }
    var sealed: URL { root.appendingPathComponent("sealed", isDirectory: true) }
    var outbox: URL { root.appendingPathComponent("outbox", isDirectory: true) }
    var rejected: URL { root.appendingPathComponent("rejected", isDirectory: true) }
    var state: URL { root.appendingPathComponent("state", isDirectory: true) }

    /// The names of the regular files in `folder`, sorted (file names start with a fixed-width time: oldest first).
    func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The size of a file in bytes (0 when it is gone).
    func size(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// Where a recorder writes, found on the agent's queue the first time it is needed: the App Group lookup and the
/// folders' creation are disk steps, which ``PushTrace/configure(appGroup:server:token:appID:)`` keeps off the
/// calling thread.
enum ContainerPlace: Sendable {
    /// Found, its folders made.
    case ready(AgentContainer)
    /// A directory whose `pushtrace` folders are not made yet.
    case directory(URL)
    /// An App Group not yet looked up.
    case appGroup(String)
    /// Found wanting, and reported.
    case unusable

    /// The container, its folders made; throws (and reports) as ``AgentContainer``'s initialisers do.
    func resolve() throws -> AgentContainer {
        switch self {
        case .ready(let container): return container
        case .directory(let url): return try AgentContainer(directory: url)
        case .appGroup(let name):
            #if canImport(Darwin)
                return try AgentContainer(appGroup: name)
            #else
                throw AgentError.appGroupUnavailable(name).reported()
            #endif
        case .unusable: throw AgentError.containerUnusable("", reason: "reported when the recorder started")
        }
    }
}

extension AgentError {
    /// Logs the error where a developer looks (the unified log on Apple platforms, standard error elsewhere), then
    /// returns it to be thrown: setup errors must never be silent, even where the caller ignores them.
    package func reported() -> AgentError {
        #if canImport(os)
            Logger(subsystem: "pushtrace", category: "agent").fault("pushtrace: \(self.description, privacy: .public)")
        #else
            FileHandle.standardError.write(Data("pushtrace: \(description)\n".utf8))
        #endif
        return self
    }
}
