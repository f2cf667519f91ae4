import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
    /// ``StoreSQL/deleteExpired(before:batchSize:progress:)``.
    @discardableResult
    public func deleteExpired(
        before cutoff: Int64, batchSize: Int,
        progress: ((RetentionReport) -> Bool)?
    ) throws -> RetentionReport {
        try sql.deleteExpired(before: cutoff, batchSize: batchSize, progress: progress)
    }

    /// ``StoreSQL/retireDictionaries(now:)``.
    package func retireDictionaries(now: Int64) throws -> Int {
        try sql.retireDictionaries(now: now)
    }
}
