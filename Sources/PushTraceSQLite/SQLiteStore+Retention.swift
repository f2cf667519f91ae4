import Foundation
import GRDB
import PushTraceStore

extension SQLiteStore {
    /// Deletes what is older than `cutoff` (epoch ms): the records of bundles received before it, the summaries of
    /// notifications whose first and last records are before it, config records superseded before it (the latest of
    /// each app, device and process stays: it is still in force), and minute-rollup rows before it. The hourly and
    /// daily rollups are kept whole, so reports of any period stay as they were.
    ///
    /// The work is done in small transactions (about `batchSize` rows each) found by WAL readers, so the writer is
    /// held only for short deletes and ingest goes on meanwhile. `progress` is called after each transaction with
    /// the totals so far; returning false stops the pass there (what was deleted stays deleted).
    @discardableResult
    public func deleteExpired(
        before cutoff: Int64, batchSize: Int,
        progress: ((RetentionReport) -> Bool)?
    ) throws -> RetentionReport {
        var pass = RetentionPass(progress: progress)
        // Records, by bundle: each bundle's records are one id range.
        let bundlesDone = try pass.untilDone { report in
            let bundles = try pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, first_block, last_block, accepted,
                            (SELECT coalesce(sum(raw_bytes), 0) FROM record_block WHERE id BETWEEN first_block AND last_block)
                        FROM bundle INDEXED BY bundle_by_received
                        WHERE received_at < ? AND pruned_at IS NULL ORDER BY received_at LIMIT ?
                        """, arguments: [cutoff, max(1, batchSize / 10)])
            }
            guard !bundles.isEmpty else { return false }
            let taken = RetentionBatch.take(bundles, lineLimit: batchSize, lines: { $0[3] }, bytes: { $0[4] })
            try pool.write { db in
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let reading = BlockReading(db, dictionaries: dictionaries)
                for bundle in taken {
                    let id: Int64 = bundle[0]
                    if let first = bundle[1] as Int64?, let last = bundle[2] as Int64? {
                        // A block holds one bundle's lines: it goes with its bundle, and so do the index entries of
                        // the notifications its lines mention.
                        var keys: [Int64: Set<Int64>] = [:]
                        do {
                            try reading.forEachLine(
                                """
                                SELECT \(unsafeRaw: BlockReading<SQLiteSession>.columns) FROM record_block b
                                JOIN bundle u ON u.id = b.bundle_ref WHERE b.id BETWEEN \(first) AND \(last)
                                """
                            ) { line in
                                report.records += 1
                                guard let notification = line.notificationID else { return }
                                keys[line.block, default: []].insert(
                                    NotificationBlockKey.of(appID: line.appID, notificationID: notification))
                            }
                        } catch {
                            // A block that cannot be read back (a damaged file) still goes with its bundle: the index
                            // entries only it could name stay behind, pointing at nothing, and retention goes on.
                            report.records +=
                                try Int.fetchOne(db, sql: "SELECT accepted FROM bundle WHERE id = ?", arguments: [id])
                                ?? 0
                        }
                        let unindex = try db.cachedStatement(sql: "DELETE FROM notification_block WHERE key = ? AND block = ?")
                        for (block, blockKeys) in keys {
                            for key in blockKeys { try unindex.execute(arguments: [key, block]) }
                        }
                        try db.execute(sql: "DELETE FROM record_block WHERE id BETWEEN ? AND ?", arguments: [first, last])
                    }
                    try db.execute(sql: "DELETE FROM rejected_line WHERE bundle_ref = ?", arguments: [id])
                    report.rejectedLines += db.changesCount
                    try db.execute(
                        sql: "UPDATE bundle SET pruned_at = ?, first_block = NULL, last_block = NULL WHERE id = ?",
                        arguments: [now, id])
                    report.bundles += 1
                }
            }
            return true
        }
        guard bundlesDone else { return pass.report }
        // Summaries, per app along the time index (their actions are a column of theirs).
        for app in try appIDs() {
            let appDone = try pass.untilDone { report in
                let summaries = try pool.read { db in
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT notification_id FROM notification INDEXED BY notification_by_time
                            WHERE app_id = ? AND first_ts < ? AND last_ts < ? AND cause IS NOT NULL LIMIT ?
                            """, arguments: [app, cutoff, cutoff, batchSize])
                }
                guard !summaries.isEmpty else { return false }
                try pool.write { db in
                    for summary in summaries {
                        let id: String = summary[0]
                        try db.execute(sql: "DELETE FROM notification WHERE app_id = ? AND notification_id = ?", arguments: [app, id])
                        report.notifications += db.changesCount
                    }
                }
                return true
            }
            guard appDone else { return pass.report }
        }
        guard try deleteSupersededConfigs(before: cutoff, batchSize: batchSize, pass: &pass) else { return pass.report }
        return try pass.finish { report in
            try pool.write { db in
                try db.execute(sql: "DELETE FROM minutely WHERE minute < ?", arguments: [cutoff / 60_000])
                report.minuteRows = db.changesCount
            }
            report.dictionaries = try retireDictionaries(now: Int64(Date().timeIntervalSince1970 * 1000))
        }
    }

    /// Deletes config records older than `cutoff` that a later record of the same app, device and process
    /// supersedes, then the bodies no config refers to any more. A WAL reader walks the table in key order, a page at
    /// a time (a row is superseded
    /// when the next row has its key), and the writer deletes what each page found: no transaction holds the
    /// writer for more than one page's deletes, however large the table. Returns false when `progress` said stop.
    private func deleteSupersededConfigs(before cutoff: Int64, batchSize: Int, pass: inout RetentionPass) throws -> Bool {
        typealias Key = (app: String, device: String, process: String, ts: Int64)
        var last: Key?
        let pageSize = max(1, batchSize) * 10
        let done = try pass.untilDone { report in
            let page = try pool.read { db in
                let rows =
                    if let key = last {
                        try Row.fetchAll(
                            db,
                            sql: """
                                SELECT app_id, device_id, process, ts FROM config
                                WHERE (app_id, device_id, process, ts) > (?, ?, ?, ?)
                                ORDER BY app_id, device_id, process, ts LIMIT ?
                                """, arguments: [key.app, key.device, key.process, key.ts, pageSize])
                    } else {
                        try Row.fetchAll(
                            db,
                            sql: """
                                SELECT app_id, device_id, process, ts FROM config
                                ORDER BY app_id, device_id, process, ts LIMIT ?
                                """, arguments: [pageSize])
                    }
                return rows.map { (app: $0[0] as String, device: $0[1] as String, process: $0[2] as String, ts: $0[3] as Int64) }
            }
            var superseded: [Key] = []
            for row in page {
                if let previous = last, previous.ts < cutoff, previous.app == row.app, previous.device == row.device,
                    previous.process == row.process
                {
                    superseded.append(previous)
                }
                last = row
            }
            if !superseded.isEmpty {
                try pool.write { db in
                    let delete = try db.cachedStatement(
                        sql: """
                            DELETE FROM config WHERE app_id = ? AND device_id = ? AND process = ? AND ts = ?
                            """)
                    for key in superseded {
                        try delete.execute(arguments: [key.app, key.device, key.process, key.ts])
                        report.configs += db.changesCount
                    }
                }
            }
            return page.count == pageSize
        }
        guard done else { return false }
        // A body is kept while any config refers to it: one pass, after the rows are gone.
        try pool.write { db in
            try db.execute(sql: "DELETE FROM config_body WHERE id NOT IN (SELECT body_ref FROM config)")
        }
        return true
    }

    /// Empties each dictionary ``DictionaryRetirement`` finds superseded at `now` once no block names it, its config
    /// bodies compressed again on their own first, one dictionary to a transaction; returns how many it emptied. The
    /// config bodies naming it are found by a reader (a scan of the table), then checked again in the writer. A
    /// bundle's blocks all take the dictionary its `BlockBuilder` was made with: a dictionary is in use while the
    /// first block of a bundle of its app names it, which the app's bundles show without an index on every block.
    package func retireDictionaries(now: Int64) throws -> Int {
        let rows = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, app_id, adler32, trained_at, length(bytes) > 0 FROM dictionary")
        }
        let whole = Set(rows.filter { $0[4] as Bool }.map { $0[0] as Int64 })
        let candidates = rows.map {
            DictionaryRetirement.Candidate(id: $0[0], appID: $0[1], adler32: $0[2], trainedAt: $0[3])
        }
        var emptied = 0
        for dictionary in DictionaryRetirement.superseded(candidates, now: now) where whole.contains(dictionary.id) {
            let used = """
                SELECT EXISTS (
                    SELECT 1 FROM bundle b JOIN record_block r ON r.id = b.first_block WHERE b.app_id = ? AND r.dictionary = ?)
                """
            let prefix = Data(DictionaryRetirement.headerPrefix(adler32: dictionary.adler32))
            let naming = "SELECT id FROM config_body WHERE substr(body, 3, 4) = ?"
            let bodies = try pool.read { db -> [Int64]? in
                guard try Bool.fetchOne(db, sql: used, arguments: [dictionary.appID, dictionary.id]) == false else { return nil }
                return try Int64.fetchAll(db, sql: naming, arguments: [prefix])
            }
            guard let bodies else { continue }
            try pool.write { db in
                guard try Bool.fetchOne(db, sql: used, arguments: [dictionary.appID, dictionary.id]) == false else { return }
                let read = try db.cachedStatement(sql: "SELECT body FROM config_body WHERE id = ? AND substr(body, 3, 4) = ?")
                let update = try db.cachedStatement(sql: "UPDATE config_body SET body = ? WHERE id = ?")
                // One writer: a body that names the dictionary now was found by the reader above.
                for id in bodies {
                    guard let body = try Data.fetchOne(read, arguments: [id, prefix]) else { continue }
                    let alone = try ConfigBody.recompressedAlone([UInt8](body)) { dictionaries.lookup($0, in: db) }
                    try update.execute(arguments: [Data(alone), id])
                }
                try db.execute(sql: "UPDATE dictionary SET bytes = x'' WHERE id = ?", arguments: [dictionary.id])
                emptied += 1
            }
        }
        return emptied
    }
}
