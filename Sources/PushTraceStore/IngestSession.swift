import PushTraceCore

/// The one writer's session of a ``TraceStore``: bundles stored many to a transaction, each all-or-nothing.
///
/// Not for several threads at once: each of a server's writers has a session of its own
/// (``TraceWriter/concurrentWriters``), and `pushtrace ingest` one writing loop.
public protocol IngestSession: AnyObject {
    /// Whether summaries wait for ``writeSummaries()`` (asked for, and granted: another process may keep the
    /// store's deferred summaries already, and then each commit writes its own).
    var defersSummaries: Bool { get }
    /// Whether deferred summaries are waiting to be written.
    var hasPendingSummaries: Bool { get }
    /// Whether deferred summaries have waited `delay`, or are more than `notifications`.
    func summariesDue(after delay: Duration, notifications: Int) -> Bool
    /// Writes the deferred summaries; on failure they are kept for the next attempt.
    func writeSummaries() throws
    /// Runs `body` in one transaction in which it stores bundles through the group it is handed, and commits once
    /// at the end. Results obtained inside `body` are acknowledgements only once this returns; if `body` throws,
    /// nothing of the group is stored.
    func inGroupCommit<T>(_ body: (any IngestGroup) throws -> T) throws -> T
}

/// Bundles being stored in one transaction (``IngestSession/inGroupCommit(_:)``).
public protocol IngestGroup {
    /// Stores one bundle: `produce` is handed a sink and feeds it the bundle's items as they are decoded (see
    /// ``BundleDecoder``). When `produce` throws, the bundle leaves nothing behind and the error is rethrown; the
    /// rest of the group is unaffected. A bundle stored before answers `duplicate` and stores nothing again.
    ///
    /// - Parameters:
    ///   - source: where the bundle came from (a file name, a request ID), kept with the bundle.
    ///   - receivedAt: when the bundle was received, epoch milliseconds: the reference for clock correction.
    func ingest(
        source: String?, receivedAt: Int64,
        _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void
    ) throws -> IngestResult
}
