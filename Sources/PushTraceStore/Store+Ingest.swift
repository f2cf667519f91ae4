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
    ///
    /// Results obtained inside `body` are acknowledgements only once this returns: nothing is committed before.
    /// If `body` throws, nothing of the group is stored.
    public func inGroupCommit<T>(_ body: (GroupCommit) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(GroupCommit(db: db, settings: settings))
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

    /// Stores one bundle in its own savepoint: when `produce` throws, the bundle leaves nothing behind and the
    /// error is rethrown; the rest of the group is unaffected.
    public func ingest(source: String?, receivedAt: Int64,
                       _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void) throws -> IngestResult {
        var result: IngestResult?
        try db.inSavepoint {
            var writer = try BundleWriter(db: db, source: source, receivedAt: receivedAt, settings: settings)
            try produce { item in try writer.add(item) }
            result = try writer.finish()
            return writer.isDuplicate ? .rollback : .commit
        }
        return result!
    }
}
