import GRDB
import PushTraceCore

extension Store {
    /// Stores one bundle in one transaction.
    ///
    /// `produce` is handed a sink and feeds it the bundle's items as they are decoded (see ``BundleDecoder``); when
    /// it throws, nothing of the bundle stays behind. The result is returned only after the commit.
    ///
    /// - Parameters:
    ///   - source: where the bundle came from (a file name, a request ID), kept with the bundle.
    ///   - receivedAt: when the bundle was received, epoch milliseconds: the reference for clock correction.
    public func ingest(source: String?, receivedAt: Int64,
                       _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void) throws -> IngestResult {
        try inGroupCommit { group in try group.ingest(source: source, receivedAt: receivedAt, produce) }
    }

    /// Runs `body` in one write transaction in which several bundles can be stored, each all-or-nothing on its
    /// own (a savepoint per bundle), and commits once at the end: many small bundles cost one commit, not one each.
    /// The bundles' per-notification facts are merged in memory and written to the summaries once, before the commit:
    /// a notification mentioned by several bundles of the group is upserted once, not once per bundle.
    ///
    /// Results obtained inside `body` are acknowledgements only once this returns: nothing is committed before.
    /// If `body` throws, nothing of the group is stored.
    public func inGroupCommit<T>(_ body: (GroupCommit) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                let group = GroupCommit(db: db, settings: settings)
                result = try body(group)
                try group.summaries.write(db)
                return .commit
            }
            return result!
        }
    }
}

/// Bundles being stored in one transaction (see ``Store/inGroupCommit(_:)``).
public struct GroupCommit {
    let db: Database
    let settings: DiagnosisSettings
    /// The facts of the bundles stored so far, written to `notification` when the group commits.
    let summaries = PendingSummaries()

    /// Stores one bundle in its own savepoint: when `produce` throws, the bundle leaves nothing behind and the
    /// error is rethrown; the rest of the group is unaffected.
    public func ingest(source: String?, receivedAt: Int64,
                       _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void) throws -> IngestResult {
        var result: IngestResult?
        var facts: [String: NotificationFacts] = [:]
        try db.inSavepoint {
            var writer = try BundleWriter(db: db, source: source, receivedAt: receivedAt, settings: settings)
            try produce { item in try writer.add(item) }
            result = try writer.finish()
            facts = writer.facts
            return writer.isDuplicate ? .rollback : .commit
        }
        // Only a stored bundle's facts count: a refused one threw above, a duplicate has none.
        summaries.merge(appID: result!.appID, facts)
        return result!
    }
}
