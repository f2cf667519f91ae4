/// How much the agent may keep in the container. When a file reaches `maxFileBytes` it is sealed and a new one
/// started; when everything kept reaches `maxTotalBytes`, the oldest sealed files (then the oldest unsent bundles)
/// are deleted and a `log` record says how many records were dropped.
public struct RecorderLimits: Sendable, Hashable {
    /// The size at which a process's file is sealed and a new one started (default 1 MiB).
    public var maxFileBytes: Int64
    /// The bound on records, sealed files and unsent bundles together (default 8 MiB).
    public var maxTotalBytes: Int64

    public init(maxFileBytes: Int64 = 1 << 20, maxTotalBytes: Int64 = 8 << 20) {
        self.maxFileBytes = maxFileBytes
        self.maxTotalBytes = maxTotalBytes
    }
}
