import Foundation
import NIOCore
import PostgresNIO
import PushTraceStore

extension PostgresStore {
    /// How long a retention pass holds its lease between two batches: a pass whose server died is taken over
    /// after it.
    static let retentionLease: Double = 120

    /// Deletes what is older than `cutoff`, as the SQLite engine does (the lines of bundles received before it, whose
    /// rows stay, marked pruned; settled summaries whose records all precede it; superseded config records and the
    /// bodies none refers to; minute-rollup rows; the dictionaries a newer one replaced that no block names), in
    /// transactions of about `batchSize` lines. One server at a time runs it, holding the `retention` lease
    /// (``PostgresLeadership``), renewed before each batch; another finds it held and deletes nothing.
    @discardableResult
    public func deleteExpired(
        before cutoff: Int64, batchSize: Int,
        progress: ((RetentionReport) -> Bool)?
    ) throws -> RetentionReport {
        let lease = PostgresLeadership.retention
        guard try withSession({ try leadership.take(lease, forSeconds: Self.retentionLease, $0) }) else { return RetentionReport() }
        defer { try? withSession { try leadership.release(lease, $0) } }
        // The totals after each committed transaction, for a pass another server takes over.
        var committed = RetentionReport()
        do {
            return try retention(leased: true).deleteExpired(before: cutoff, batchSize: batchSize) { report in
                committed = report
                return progress?(report) ?? true
            }
        } catch is RetentionLeaseLost {
            // Another server took the pass over (this one was too slow to renew): what was deleted stays deleted.
            return committed
        }
    }

    /// Renews the retention lease inside a batch's transaction, whose commit it then holds off any takeover until;
    /// throws ``RetentionLeaseLost`` (rolling the batch back) when it expired or another server holds it now.
    private func renewRetentionLease(_ session: PostgresSession) throws {
        guard try leadership.renew(PostgresLeadership.retention, forSeconds: Self.retentionLease, session)
        else { throw RetentionLeaseLost() }
    }

    /// The store's SQL with each transaction that writes renewing the retention lease first, when `leased`.
    private func retention(leased: Bool) -> StoreSQL<PostgresSession> {
        var retention = sql
        if leased {
            retention.write = { [self] body in
                try writing { session in
                    try renewRetentionLease(session)
                    try body(session)
                }
            }
        }
        return retention
    }

    /// ``StoreSQL/retireDictionaries(now:)``, outside a retention pass.
    package func retireDictionaries(now: Int64) throws -> Int {
        try retention(leased: false).retireDictionaries(now: now)
    }

    /// PostgreSQL gives deleted rows' room back in place: `VACUUM` makes it reusable and truncates empty pages at
    /// the end of each table.
    public func releasesInPlace() throws -> Bool { true }

    /// Runs `VACUUM` on every table (outside a transaction: it cannot run in one); returns the bytes the database
    /// gave back to the file system.
    public func releaseFreePages(pagesPerStep: Int, progress: ((_ released: Int64, _ toGo: Int64) -> Bool)?) throws -> Int64 {
        try withSession { pooled in
            var session = pooled
            session.deadline = nil  // VACUUM takes as long as the tables need
            let size = { try session.query("SELECT pg_database_size(current_database())").first(where: { _ in true })!.decode(Int64.self) }
            let before = try size()
            let tables = try session.query(
                """
                SELECT table_name::text FROM information_schema.tables
                WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name
                """
            ).map { try $0.decode(String.self) }
            for (index, table) in tables.enumerated() {
                try session.query(PostgresQuery(unsafeSQL: "VACUUM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""))
                if progress?(max(0, before - (try size())), Int64(tables.count - index - 1)) == false { break }
            }
            return max(0, before - (try size()))
        }
    }

    /// `VACUUM FULL`: rewrites every table compactly. It locks each table while it rewrites it (uploads wait), so
    /// `pushtrace vacuum` runs the in-place release unless asked for this.
    public func vacuum(starting: ((RebuildRoom) -> Void)?) throws {
        try withSession { pooled in
            var session = pooled
            session.deadline = nil
            _ = try session.query("VACUUM FULL")
        }
    }
}

/// The retention lease went to another server between two batches.
private struct RetentionLeaseLost: Error {}
