import Foundation
import NIOCore
import PostgresNIO
import PushTraceStore

extension PostgresStore {
    /// The whole store, in one repeatable-read transaction (one snapshot), a page at a time.
    public func copyOut(_ part: (CopiedPart) throws -> Void) throws {
        try reading { session in
            try session.copyOut(layout: .postgres, dictionary: { [dictionaries] in dictionaries.lookup($0, session) }, part)
        }
    }

    public func makeCopyTarget() throws -> any StoreCopyTarget {
        if let table = try withSession({ try $0.firstNonEmptyCopiedTable() }) {
            throw StoreError.copyTargetNotEmpty(location, table: table)
        }
        return PostgresCopyTarget(store: self)
    }
}

/// Writes a copy into an empty PostgreSQL store, all of it in one transaction (a copy that fails leaves the store
/// empty), by `COPY … FROM STDIN`. The indexes no constraint needs are dropped first and built again at the end,
/// in one sort each, rather than grown row by row. Dictionary, config-body and block ids are kept (blocks and config
/// rows name the first two; the third is the order lines were stored in); bundles and rejected lines take ids the
/// sequences hand out, a page's worth at once.
final class PostgresCopyTarget: StoreCopyTarget {
    private let store: PostgresStore

    init(store: PostgresStore) {
        self.store = store
    }

    func copy(_ parts: ((CopiedPart) throws -> Void) throws -> Void) throws -> CopyFinish {
        try store.withSession { session in
            // A statement of a copy may take minutes (an index built over every row): no deadline, no timeout.
            let session = {
                var unbounded = $0
                unbounded.deadline = nil
                return unbounded
            }(session)
            return try session.transaction {
                try session.query(
                    """
                    SELECT set_config('statement_timeout', '0', true),
                           set_config('idle_in_transaction_session_timeout', '0', true),
                           set_config('lock_timeout', '30s', true),
                           set_config('maintenance_work_mem', '512MB', true)
                    """)
                // The indexes that back no constraint, of this schema's tables. Dropping one locks its table until
                // the copy commits: a server or a `pushtrace sql` using the database makes the copy fail (after the
                // lock timeout) rather than wait.
                let indexes = try session.query(
                    """
                    SELECT i.oid::regclass::text, pg_get_indexdef(i.oid)
                    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
                    WHERE t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                      AND NOT x.indisunique AND NOT x.indisexclusion AND i.relkind = 'i' AND NOT i.relispartition
                      AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = x.indexrelid)
                    ORDER BY i.relname
                    """
                ).map { try $0.decode((String, String).self) }
                for (name, _) in indexes { try session.query(PostgresQuery(unsafeSQL: "DROP INDEX \(name)")) }
                try parts { part in
                    try session.writeCopied(part, rows: session.copyIn) { try insert($0, session) }
                }
                for (_, definition) in indexes { try session.query(PostgresQuery(unsafeSQL: definition)) }
                // Autovacuum could not see the tables while the copy held them: the planner's statistics, now.
                let tables = (StoreCopy.countedTables + ["notification_block"]).joined(separator: ", ")
                try session.query(PostgresQuery(unsafeSQL: "ANALYZE \(tables)"))
                for table in ["dictionary", "config_body", "record_block"] {
                    try session.query(
                        PostgresQuery(
                            unsafeSQL: """
                                SELECT setval(pg_get_serial_sequence('\(table)', 'id'), coalesce(max(id), 0) + 1, false) FROM \(table)
                                """))
                }
                return CopyFinish(counts: try session.copiedCounts())
            }
        }
    }

    private func insert(_ bundles: [CopiedBundle], _ session: PostgresSession) throws {
        let bundleIDs = try Self.reserve(bundles.count, "bundle", session)
        var bundleRows: [[SQLValue]] = [], blockRows: [[SQLValue]] = [], entries: [[SQLValue]] = []
        var rejectedRows: [[SQLValue]] = []
        func value(_ value: some SQLValueConvertible) -> SQLValue { value.sqlValue }
        for (bundle, id) in zip(bundles, bundleIDs) {
            bundleRows.append([
                .integer(id), .text(bundle.appID), .text(bundle.bundleID), value(bundle.deviceID), value(bundle.appVersion),
                value(bundle.build), value(bundle.os), value(bundle.deviceModel), value(bundle.sdk), value(bundle.uploadedAt),
                .integer(bundle.receivedAt), .integer(bundle.clockOffsetMs), value(bundle.source), .integer(bundle.accepted),
                .integer(bundle.rejected), value(bundle.prunedAt), value(bundle.tsFrom), value(bundle.tsTo),
                value(bundle.configTsFrom), value(bundle.configTsTo),
            ])
            for block in bundle.blocks {
                // The source's id: lines of one notification in two bundles, stored in one millisecond, keep their order.
                let blockID = block.id
                blockRows.append([
                    .integer(blockID), .integer(id), .integer(block.lines), .integer(block.rawBytes),
                    .integer(block.dictionary), .bytes(block.data),
                ])
                entries += block.keys.map { [.integer($0), .integer(blockID)] }
            }
            rejectedRows += bundle.rejectedLines.map { [.integer(id), .integer($0.line), .text($0.reason), .bytes($0.raw)] }
        }
        try session.copyIn(
            into: "bundle",
            columns: [
                "id", "app_id", "bundle_id", "device_id", "app_version", "build", "os", "device_model",
                "sdk", "uploaded_at", "received_at", "clock_offset_ms", "source", "accepted", "rejected",
                "pruned_at", "ts_from", "ts_to", "config_ts_from", "config_ts_to",
            ], bundleRows)
        try session.copyIn(into: "record_block", columns: ["id", "bundle_ref", "lines", "raw_bytes", "dictionary", "data"], blockRows)
        // A block's keys are distinct and its id is the source's own: no entry can be there already.
        try session.copyIn(into: "notification_block", columns: ["key", "block"], entries)
        try session.copyIn(into: "rejected_line", columns: ["bundle_ref", "line", "reason", "raw"], rejectedRows)
    }

    /// `count` ids from `table`'s sequence.
    private static func reserve(_ count: Int, _ table: String, _ session: PostgresSession) throws -> [Int64] {
        guard count > 0 else { return [] }
        return try session.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT nextval(pg_get_serial_sequence('\(table)', 'id')) FROM generate_series(1, \(count))
                    """)
        ).map { try $0.decode(Int64.self) }
    }
}
