import Foundation

/// How much the agent may keep in the container, and how long a launch's files may sit untouched before another
/// launch treats it as ended. When a file reaches `maxFileBytes` it is sealed and a new one started; when everything
/// kept reaches `maxTotalBytes`, the oldest sealed files (then the oldest unsent bundles no upload holds) are
/// deleted and a `log` record says how many records were dropped.
public struct RecorderLimits: Sendable, Hashable {
    /// The size at which a process's file is sealed and a new one started (default 1 MiB).
    public var maxFileBytes: Int64
    /// The bound on records, sealed files and unsent bundles together (default 8 MiB).
    public var maxTotalBytes: Int64
    /// A record file whose launch cannot be told alive or ended (its process ID reused, or the system not saying) is
    /// sealed after this long untouched (default 10 minutes). A launch that writes again after a longer pause
    /// notices and starts a new file.
    public var idleFileSealAfter: TimeInterval
    /// Likewise for an in-flight marker: a service extension is given about 30 s per notification, so a marker
    /// untouched for this long (default 2 minutes) belongs to a launch that ended.
    public var inFlightStaleAfter: TimeInterval

    public init(
        maxFileBytes: Int64 = 1 << 20, maxTotalBytes: Int64 = 8 << 20, idleFileSealAfter: TimeInterval = 600,
        inFlightStaleAfter: TimeInterval = 120
    ) {
        self.maxFileBytes = maxFileBytes
        self.maxTotalBytes = maxTotalBytes
        self.idleFileSealAfter = idleFileSealAfter
        self.inFlightStaleAfter = inFlightStaleAfter
    }
}
