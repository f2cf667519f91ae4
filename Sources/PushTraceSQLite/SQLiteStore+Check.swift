import GRDB
import PushTraceStore

extension SQLiteStore {
    /// Reads every block back and recounts what the store keeps about its lines (``BlockReading/check(summarized:)``),
    /// in one read transaction, so a server may go on writing; its summaries still waiting (``SummaryBacklog``) are
    /// left out of the recount.
    public func check() throws -> StoreCheck {
        try pool.read { db in try BlockReading(db, dictionaries: dictionaries).check(summarized: "u.summarized") }
    }
}
