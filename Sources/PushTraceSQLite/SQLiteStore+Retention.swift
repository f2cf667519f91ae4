import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
    /// Retention's statements (``Retention``) over this store: its reads are WAL readers beside the writer, and each
    /// of its transactions holds the writer only for short deletes, so ingest goes on meanwhile.
    var retention: Retention<SQLiteSession> {
        Retention(
            layout: .sqlite, dictionaries: dictionaries,
            read: { [pool] body in try pool.read { try body(SQLiteSession(db: $0)) } },
            write: { [pool] body in try pool.write { try body(SQLiteSession(db: $0)) } })
    }

    /// ``Retention/deleteExpired(before:batchSize:apps:progress:)``.
    @discardableResult
    public func deleteExpired(
        before cutoff: Int64, batchSize: Int,
        progress: ((RetentionReport) -> Bool)?
    ) throws -> RetentionReport {
        try retention.deleteExpired(before: cutoff, batchSize: batchSize, apps: appIDs(), progress: progress)
    }

    /// ``Retention/retireDictionaries(now:)``.
    package func retireDictionaries(now: Int64) throws -> Int {
        try retention.retireDictionaries(now: now)
    }
}
