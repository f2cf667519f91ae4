import Foundation

extension StoreSQL {
    /// Deletes what is older than `cutoff` (epoch ms): the lines of bundles received before it (their rows stay,
    /// marked pruned, so that a re-upload is still answered `duplicate`), the settled summaries of `apps` whose
    /// records all precede it, config records superseded before it (the latest of each app, device and process
    /// stays: it is still in force) and the bodies none refers to, minute-rollup rows before it, and the
    /// dictionaries a newer one replaced that no block names. Hourly and daily rollups are kept whole, so reports
    /// of any period stay as they were.
    ///
    /// The work goes in small transactions of about `batchSize` lines or rows, so ingest commits between them;
    /// `progress` is told the totals after each, and stops the pass by answering false.
    package func deleteExpired(
        before cutoff: Int64, batchSize: Int, progress: ((RetentionReport) -> Bool)?
    ) throws -> RetentionReport {
        let batchSize = max(1, batchSize)
        let apps = try readingOne { try await AppRows.all($0) }
        var pass = RetentionPass(progress: progress)
        guard try pass.untilDone({ report in try writing { try pruneBundles(before: cutoff, batchSize, $0, &report) } })
        else { return pass.report }
        for app in apps {
            let done = try pass.untilDone { report in
                let deleted = try writing { session in
                    try session.execute(
                        """
                        DELETE FROM notification WHERE (app_id, notification_id) IN (
                            SELECT app_id, notification_id FROM notification\(unsafeRaw: session.dialect.indexedBy("notification_by_time"))
                            WHERE app_id = \(app) AND first_ts < \(cutoff) AND last_ts < \(cutoff) AND cause IS NOT NULL
                            LIMIT \(Int64(batchSize))\(unsafeRaw: session.dialect.rowLockSkippingLocked(of: "notification")))
                        """)
                }
                report.notifications += deleted
                return deleted > 0
            }
            guard done else { return pass.report }
        }
        guard try deleteSupersededConfigs(before: cutoff, pageSize: batchSize * 10, &pass) else { return pass.report }
        return try pass.finish { report in
            report.minuteRows = try writing { session in
                // A body an ingest is taking up now is locked by it (where rows are locked) and passed over.
                try session.execute(
                    """
                    DELETE FROM config_body WHERE id IN (
                        SELECT o.id FROM config_body o LEFT JOIN config c ON c.body_ref = o.id
                        WHERE c.body_ref IS NULL\(unsafeRaw: session.dialect.rowLockSkippingLocked(of: "o")))
                    """)
                return try session.execute("DELETE FROM minutely WHERE minute < \(cutoff / 60_000)")
            }
            report.dictionaries = try retireDictionaries(now: Int64(Date().timeIntervalSince1970 * 1000))
        }
    }

    /// Prunes the oldest bundles received before `cutoff`, as many as one transaction takes (``RetentionBatch``).
    /// A block holds one bundle's lines: it goes with its bundle, and so do the index entries of the notifications
    /// its lines mention. Returns whether there was one.
    private func pruneBundles(before cutoff: Int64, _ batchSize: Int, _ session: Session, _ report: inout RetentionReport) throws -> Bool {
        let dialect = session.dialect
        let candidates = try session.rows(
            """
            SELECT u.id, u.accepted,
                   CAST((SELECT coalesce(sum(b.raw_bytes), 0) FROM record_block b WHERE \(unsafeRaw: layout.blocksOfBundle)) AS bigint)
            FROM bundle u\(unsafeRaw: dialect.indexedBy("bundle_by_received")) WHERE u.received_at < \(cutoff) AND u.pruned_at IS NULL
            ORDER BY u.received_at LIMIT \(Int64(max(1, batchSize / 10)))\(unsafeRaw: dialect.rowLockSkippingLocked(of: "u"))
            """
        ).map {
            (id: try $0.decode(at: 0, as: Int64.self), lines: try $0.decode(at: 1, as: Int.self), bytes: try $0.decode(at: 2, as: Int.self))
        }
        let bundles = RetentionBatch.take(candidates, lineLimit: batchSize, lines: \.lines, bytes: \.bytes).map(\.id)
        guard !bundles.isEmpty else { return false }
        let ids = SQLStatement.joined(bundles.map { "\($0)" }, separator: ", ")
        let reader = StoredLineReader { dictionaries.lookup($0, session) }
        var entries: [SQLStatement] = []
        try session.each(
            """
            SELECT \(unsafeRaw: BlockReading<Session>.columns) FROM bundle u JOIN record_block b ON \(unsafeRaw: layout.blocksOfBundle)
            WHERE u.id IN (\(ids))
            """
        ) { row in
            let block = try BlockReading<Session>.block(row)
            var (mentioned, lines) = (Set<Int64>(), 0)
            do {
                try reader.forEachLine(of: block) { line in
                    lines += 1
                    if let id = line.notificationID { mentioned.insert(NotificationBlockKey.of(appID: line.appID, notificationID: id)) }
                }
            } catch {
                // A block that cannot be read back (a damaged file) still goes: the index entries only it could name
                // stay behind, pointing at nothing, and retention goes on.
                lines = block.lines
            }
            report.records += lines
            entries += mentioned.map { "(key = \($0) AND block = \(block.id))" }
        }
        for start in stride(from: 0, to: entries.count, by: dialect.rowsPerUpsert) {
            let some = entries[start..<min(entries.count, start + dialect.rowsPerUpsert)]
            try session.send("DELETE FROM notification_block WHERE \(SQLStatement.joined(Array(some), separator: " OR "))")
        }
        try session.execute(
            """
            DELETE FROM record_block WHERE id IN (
                SELECT b.id FROM bundle u JOIN record_block b ON \(unsafeRaw: layout.blocksOfBundle) WHERE u.id IN (\(ids)))
            """)
        report.rejectedLines += try session.execute("DELETE FROM rejected_line WHERE bundle_ref IN (\(ids))")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try session.execute("UPDATE bundle SET pruned_at = \(now)\(unsafeRaw: layout.prunedBlocks) WHERE id IN (\(ids))")
        report.bundles += bundles.count
        return true
    }

    /// Deletes config records older than `cutoff` that a later record of the same app, device and process
    /// supersedes. A read walks the table in key order, a page at a time (a row is superseded when the next row has
    /// its key), and a transaction deletes what each page found: none holds the writer for more than one page's
    /// deletes, however large the table. Returns false when `progress` said stop.
    private func deleteSupersededConfigs(before cutoff: Int64, pageSize: Int, _ pass: inout RetentionPass) throws -> Bool {
        typealias Key = (app: String, device: String, process: String, ts: Int64)
        var last: Key?
        return try pass.untilDone { report in
            let page = try reading { session in
                let after: SQLStatement =
                    last.map { "WHERE (app_id, device_id, process, ts) > (\($0.app), \($0.device), \($0.process), \($0.ts))" } ?? ""
                return try session.rows(
                    "SELECT app_id, device_id, process, ts FROM config \(after) ORDER BY app_id, device_id, process, ts LIMIT \(Int64(pageSize))"
                ).map {
                    (app: try $0.decode(at: 0), device: try $0.decode(at: 1), process: try $0.decode(at: 2), ts: try $0.decode(at: 3))
                        as Key
                }
            }
            var superseded: [SQLStatement] = []
            for row in page {
                if let previous = last, previous.ts < cutoff,
                    (previous.app, previous.device, previous.process) == (row.app, row.device, row.process)
                {
                    superseded.append(
                        "(app_id = \(previous.app) AND device_id = \(previous.device) AND process = \(previous.process) AND ts = \(previous.ts))"
                    )
                }
                last = row
            }
            if !superseded.isEmpty {
                report.configs += try writing { session in
                    try stride(from: 0, to: superseded.count, by: session.dialect.rowsPerUpsert).reduce(0) { deleted, start in
                        let some = superseded[start..<min(superseded.count, start + session.dialect.rowsPerUpsert)]
                        return deleted
                            + (try session.execute("DELETE FROM config WHERE \(SQLStatement.joined(Array(some), separator: " OR "))"))
                    }
                }
            }
            return page.count == pageSize
        }
    }

    /// Empties each dictionary ``DictionaryRetirement`` finds superseded at `now` once no block names it, its config
    /// bodies compressed again on their own first, one dictionary to a transaction; returns how many it emptied.
    ///
    /// Every writer takes an app's newest dictionary for new blocks at its next group (``BlockDictionaries``), and a
    /// dictionary is weighed only once a newer one is ``DictionaryRetirement/grace`` old: no writer still compresses
    /// against it then. A bundle's blocks all take the dictionary its `BlockBuilder` was made with, so a dictionary
    /// is in use while the first block of a bundle of its app names it. The bodies that name it are found by a read,
    /// then checked again, and locked where rows are locked, in the transaction that rewrites them.
    package func retireDictionaries(now: Int64) throws -> Int {
        let rows = try reading { try $0.rows("SELECT id, app_id, adler32, trained_at, length(bytes) > 0 FROM dictionary") }
        let whole = Set(try rows.filter { try $0.decode(at: 4, as: Bool.self) }.map { try $0.decode(at: 0, as: Int64.self) })
        let candidates = try rows.map {
            DictionaryRetirement.Candidate(
                id: try $0.decode(at: 0), appID: try $0.decode(at: 1), adler32: try $0.decode(at: 2), trainedAt: try $0.decode(at: 3))
        }
        var emptied = 0
        for dictionary in DictionaryRetirement.superseded(candidates, now: now) where whole.contains(dictionary.id) {
            let used: SQLStatement = """
                SELECT EXISTS (
                    SELECT 1 FROM bundle u JOIN record_block b ON b.id = \(unsafeRaw: layout.firstBlock)
                    WHERE u.app_id = \(dictionary.appID) AND b.dictionary = \(dictionary.id))
                """
            let prefix = SQLBytes(DictionaryRetirement.headerPrefix(adler32: dictionary.adler32))
            let bodies = try reading { session -> [Int64]? in
                guard try session.rows(used).first?.decode(at: 0, as: Bool.self) == false else { return nil }
                return try session.rows("SELECT id FROM config_body WHERE substr(body, 3, 4) = \(prefix)").map { try $0.decode(at: 0) }
            }
            guard let bodies else { continue }
            let retired = try writing { session -> Bool in
                if let lock = session.dialect.rowLock {
                    _ = try session.rows("SELECT 1 FROM dictionary WHERE id = \(dictionary.id)\(unsafeRaw: lock)")
                }
                // Blocks are never rewritten: once none names the dictionary, none will (the grace has passed).
                guard try session.rows(used).first?.decode(at: 0, as: Bool.self) == false else { return false }
                for id in bodies {
                    guard
                        let body = try session.rows(
                            "SELECT body FROM config_body WHERE id = \(id) AND substr(body, 3, 4) = \(prefix)\(unsafeRaw: session.dialect.rowLock ?? "")"
                        ).first?.decode(at: 0, as: SQLBytes.self)
                    else { continue }
                    let alone = try ConfigBody.recompressedAlone(body.bytes) { dictionaries.lookup($0, session) }
                    try session.execute("UPDATE config_body SET body = \(SQLBytes(alone)) WHERE id = \(id)")
                }
                try session.execute("UPDATE dictionary SET bytes = \(SQLBytes([])) WHERE id = \(dictionary.id)")
                return true
            }
            if retired { emptied += 1 }
        }
        return emptied
    }
}
