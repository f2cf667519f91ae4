/// The upkeep role of a store: retention, giving room back, rebuilding rollups, copying, and sharing work among the
/// processes of one store. The server's retention and alert services and the CLI's upkeep commands hold this.
public protocol StoreUpkeep: StoreAccess {
    /// Deletes the lines and rejected lines of bundles received before `cutoff` (their rows stay, marked pruned, so a
    /// late re-upload is still a duplicate), summaries whose records all precede it, superseded config records and
    /// the bodies none refers to, minute-rollup rows, and (an engine that can) the dictionaries a newer one replaced
    /// that no block names; `batchSize` bundles to a transaction; `progress` is told after each and stops the work by
    /// returning false. Rollups keep their counts.
    func deleteExpired(before cutoff: Int64, batchSize: Int, progress: ((RetentionReport) -> Bool)?) throws -> RetentionReport
    /// Whether deleted data's room is given back in place (``releaseFreePages(pagesPerStep:progress:)``) rather
    /// than by a rebuild (``vacuum(starting:)``).
    func releasesInPlace() throws -> Bool
    /// Gives freed room back to the file system in steps; `progress` (released, to go) stops it by returning false.
    /// Returns the bytes released.
    func releaseFreePages(pagesPerStep: Int, progress: ((_ released: Int64, _ toGo: Int64) -> Bool)?) throws -> Int64
    /// Rebuilds the store's files compactly; `starting` is told the room it needs before it begins.
    func vacuum(starting: ((RebuildRoom) -> Void)?) throws
    /// Recomputes every rollup from the settled summaries.
    func rebuildRollups() throws

    /// Reads the whole store out, in one snapshot, a page at a time, in the order of ``CopiedPart`` (``StoreCopy``).
    /// Fails with ``StoreError/copySourceBusy(_:)`` when a process writing it keeps work it has not stored yet.
    func copyOut(_ part: (CopiedPart) throws -> Void) throws
    /// A writer of a copy into this store; fails with ``StoreError/copyTargetNotEmpty(_:table:)`` unless the store
    /// holds nothing.
    func makeCopyTarget() throws -> any StoreCopyTarget

    /// Whether this process is the one that runs `task` among every process sharing the store, taking the role
    /// when no process holds it, for `lease` from now: a leader that stops asking within it loses the role to the
    /// next process that asks. A store one process writes (SQLite) always answers true.
    func leads(_ task: SharedTask, for lease: Duration) throws -> Bool
}

extension StoreUpkeep {
    /// One process writes the store: it leads every shared task.
    public func leads(_ task: SharedTask, for lease: Duration) throws -> Bool { true }

    /// Deletes what was received before `cutoff`, ``StoreDefaults/retentionBatch`` bundles to a transaction.
    public func deleteExpired(before cutoff: Int64, progress: ((RetentionReport) -> Bool)? = nil) throws -> RetentionReport {
        try deleteExpired(before: cutoff, batchSize: StoreDefaults.retentionBatch, progress: progress)
    }

    @discardableResult
    public func releaseFreePages(progress: ((_ released: Int64, _ toGo: Int64) -> Bool)? = nil) throws -> Int64 {
        try releaseFreePages(pagesPerStep: StoreDefaults.releasePagesPerStep, progress: progress)
    }

    public func vacuum() throws { try vacuum(starting: nil) }
}
