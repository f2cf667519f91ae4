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
        var pass = RetentionPass(progress: progress)
        do {
            return try deleteExpiredHoldingLock(before: cutoff, batchSize: max(1, batchSize), &pass)
        } catch is RetentionLeaseLost {
            // Another server took the pass over (this one was too slow to renew): what was deleted stays deleted.
            return pass.report
        }
    }

    /// Renews the retention lease inside a batch's transaction, whose commit it then holds off any takeover until;
    /// throws ``RetentionLeaseLost`` (rolling the batch back) when it expired or another server holds it now.
    private func renewRetentionLease(_ session: PostgresSession) throws {
        guard try leadership.renew(PostgresLeadership.retention, forSeconds: Self.retentionLease, session)
        else { throw RetentionLeaseLost() }
    }

    private func deleteExpiredHoldingLock(before cutoff: Int64, batchSize: Int, _ pass: inout RetentionPass) throws -> RetentionReport {
        let bundlesDone = try pass.untilDone { report in
            try writing { session -> Bool in
                try renewRetentionLease(session)
                let candidates = try session.query(
                    """
                    SELECT id, accepted, (SELECT coalesce(sum(raw_bytes), 0) FROM record_block r WHERE r.bundle_ref = bundle.id)::bigint
                    FROM bundle WHERE received_at < \(cutoff) AND pruned_at IS NULL
                    ORDER BY received_at LIMIT \(Int64(max(1, batchSize / 10))) FOR UPDATE SKIP LOCKED
                    """
                ).map { try $0.decode((Int64, Int64, Int64).self) }
                let bundles = RetentionBatch.take(
                    candidates, lineLimit: batchSize, lines: { Int($0.1) }, bytes: { Int($0.2) }
                ).map(\.0)
                guard !bundles.isEmpty else { return false }
                // A block goes with its bundle, and so do the index entries of the notifications its lines mention.
                let reader = StoredLineReader { [dictionaries] in dictionaries.lookup($0, session) }
                var keys: [Int64] = [], blocks: [Int64] = []
                for row in try session.sqlRows(
                    """
                    SELECT \(unescaped: BlockReading<PostgresSession>.columns) FROM record_block b
                    JOIN bundle u ON u.id = b.bundle_ref WHERE b.bundle_ref = ANY(\(bundles)::bigint[])
                    """)
                {
                    let block = try BlockReading<PostgresSession>.block(row)
                    var mentioned: Set<Int64> = []
                    do {
                        try reader.forEachLine(of: block) { line in
                            report.records += 1
                            if let id = line.notificationID {
                                mentioned.insert(NotificationBlockKey.of(appID: line.appID, notificationID: id))
                            }
                        }
                    } catch {
                        // A block that cannot be read back still goes: the index entries only it could name stay
                        // behind, pointing at nothing, and retention goes on.
                        report.records += block.lines
                    }
                    for key in mentioned {
                        keys.append(key)
                        blocks.append(block.id)
                    }
                }
                try session.query(
                    """
                    DELETE FROM notification_block WHERE (key, block) IN (SELECT * FROM unnest(\(keys)::bigint[], \(blocks)::bigint[]))
                    """)
                try session.query("DELETE FROM record_block WHERE bundle_ref = ANY(\(bundles)::bigint[])")
                report.rejectedLines += try session.changes("DELETE FROM rejected_line WHERE bundle_ref = ANY(\(bundles)::bigint[])")
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try session.query("UPDATE bundle SET pruned_at = \(now) WHERE id = ANY(\(bundles)::bigint[])")
                report.bundles += bundles.count
                return true
            }
        }
        guard bundlesDone else { return pass.report }
        let summariesDone = try pass.untilDone { report in
            let count = try inTransaction { session in
                try renewRetentionLease(session)
                return try session.changes(
                    """
                    DELETE FROM notification WHERE ctid IN (
                        SELECT ctid FROM notification WHERE first_ts < \(cutoff) AND last_ts < \(cutoff) AND cause IS NOT NULL
                        LIMIT \(Int64(batchSize)) FOR UPDATE SKIP LOCKED)
                    """)
            }
            report.notifications += count
            return count > 0
        }
        guard summariesDone else { return pass.report }
        let configsDone = try pass.untilDone { report in
            // A config record is superseded by a later one of the same app, device and process; the latest stays.
            let count = try inTransaction { session in
                try renewRetentionLease(session)
                return try session.changes(
                    """
                    DELETE FROM config WHERE ctid IN (
                        SELECT c.ctid FROM config c WHERE c.ts < \(cutoff) AND EXISTS (
                            SELECT 1 FROM config d WHERE d.app_id = c.app_id AND d.device_id = c.device_id
                            AND d.process = c.process AND d.ts > c.ts)
                        LIMIT \(Int64(batchSize)))
                    """)
            }
            report.configs += count
            return count > 0
        }
        guard configsDone else { return pass.report }
        return try pass.finish { report in
            try inTransaction { session in
                try renewRetentionLease(session)
                // A body an ingest is taking up now is locked by it (`FOR KEY SHARE`) and skipped.
                try session.query(
                    """
                    DELETE FROM config_body WHERE id IN (
                        SELECT b.id FROM config_body b WHERE NOT EXISTS (SELECT 1 FROM config c WHERE c.body_ref = b.id)
                        FOR UPDATE SKIP LOCKED)
                    """)
                report.minuteRows = try session.changes("DELETE FROM minutely WHERE minute < \(cutoff / 60_000)")
            }
            report.dictionaries = try retireDictionaries(now: Int64(Date().timeIntervalSince1970 * 1000))
        }
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
