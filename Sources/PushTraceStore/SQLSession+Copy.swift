extension QueryValue: SQLValueConvertible {
    public var sqlValue: SQLValue {
        switch self {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .real(real)
        case .text(let text): .text(text)
        case .blob(let bytes): .bytes(bytes)
        }
    }

    public init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .bytes(let bytes): self = .blob(bytes)
        }
    }
}

extension SQLSession {
    /// Inserts `rows` into `table`, many to a statement: as many as stay under either engine's limit on bound values,
    /// and at most ``copyBytesPerStatement`` of values (one row always goes, whatever its size).
    package func insertRows(
        into table: String, columns: [String], _ rows: [[SQLValue]]
    ) throws {
        let perStatement = max(1, 30_000 / columns.count)
        var start = 0
        while start < rows.count {
            var tuples: [SQLStatement] = []
            var bytes = 0
            while start < rows.count, tuples.count < perStatement, tuples.isEmpty || bytes < copyBytesPerStatement {
                for value in rows[start] {
                    switch value {
                    case .text(let text): bytes += 8 + text.utf8.count
                    case .bytes(let blob): bytes += 8 + blob.count
                    default: bytes += 8
                    }
                }
                let values = SQLStatement.joined(rows[start].map { "\($0)" }, separator: ", ")
                tuples.append("(\(values))")
                start += 1
            }
            try execute(
                """
                INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: columns.joined(separator: ", ")))
                VALUES \(SQLStatement.joined(tuples, separator: ", "))
                """)
        }
    }

    /// The most bytes of values one multi-row insert carries (a block is at most a few hundred kilobytes).
    package var copyBytesPerStatement: Int { 16 << 20 }

    /// Writes a part of a copy the same way in every engine; its bundles, whose rows each engine lays out its own
    /// way, go to `bundles`.
    package func writeCopied(_ part: CopiedPart, bundles: ([CopiedBundle]) throws -> Void) throws {
        try writeCopied(part, rows: { try insertRows(into: $0, columns: $1, $2) }, bundles: bundles)
    }

    /// ``writeCopied(_:bundles:)``, with rows appended to a table by `rows` (table, columns, rows): an engine's
    /// own bulk load.
    package func writeCopied(
        _ part: CopiedPart, rows insert: (String, [String], [[SQLValue]]) throws -> Void,
        bundles: ([CopiedBundle]) throws -> Void
    ) throws {
        switch part {
        case .bundleCount, .counts: break
        case .dictionaries(let dictionaries):
            try insert(
                "dictionary", ["id", "app_id", "adler32", "trained_at", "bytes"],
                dictionaries.map { [.integer($0.id), $0.appID.sqlValue, .integer($0.adler32), .integer($0.trainedAt), .bytes($0.bytes)] })
        case .configBodies(let bodies):
            try insert(
                "config_body", ["id", "digest", "app_group", "body"],
                bodies.map { [.integer($0.id), .integer($0.digest), $0.appGroup.sqlValue, .bytes($0.body)] })
        case .bundles(let copied):
            try bundles(copied)
        case .rows(let table, let rows):
            try insert(table.name, table.columns, rows.map { $0.map(\.sqlValue) })
        }
    }
}

extension SQLSession {
    /// Each of ``StoreCopy/countedTables``' rows, in the caller's snapshot.
    package func copiedCounts() throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for table in StoreCopy.countedTables {
            counts[table] = try rows("SELECT count(*) FROM \(unsafeRaw: table)").first?.decode(at: 0)
        }
        return counts
    }

    /// The whole store read out as a copy's parts, in the caller's snapshot (docs/spec.md §9): the leading parts, the
    /// bundles in the order stored, each with its blocks and rejected lines, every table of ``StoreCopy/tables`` a
    /// page at a time, and last each table's count. `dictionary` finds a block dictionary by its Adler-32.
    package func copyOut(
        layout: BundleLayout, dictionary: @escaping (UInt32) -> [UInt8]?, _ part: (CopiedPart) throws -> Void
    ) throws {
        try copyOutLeading(dictionary: dictionary, pageSize: StoreCopy.rowsPerPage, part)
        try copyOutBundles(layout: layout, reader: StoredLineReader(dictionary: dictionary), part)
        for table in StoreCopy.tables {
            let columns = table.columns.joined(separator: ", ")
            try each("SELECT \(unsafeRaw: columns) FROM \(unsafeRaw: table.name)", pagesOf: StoreCopy.rowsPerPage) { rows in
                try part(.rows(table, rows.map { row in row.values.map { QueryValue(sqlValue: $0) ?? .null } }))
            }
        }
        try part(.counts(copiedCounts()))
    }

    /// Bundles in the order stored, ``StoreCopy/bundlesPerPage`` to a read, each with its blocks (read bundle by
    /// bundle: a day's backend bundle holds thousands) and rejected lines. A part ends early once its blocks reach
    /// ``StoreCopy/bytesPerPage``.
    private func copyOutBundles(layout: BundleLayout, reader: StoredLineReader, _ part: (CopiedPart) throws -> Void) throws {
        var after: Int64 = 0
        while true {
            let rows = try rows(
                """
                SELECT u.id, u.app_id, u.bundle_id, u.device_id, \(unsafeRaw: layout.client), u.uploaded_at, u.received_at,
                       u.clock_offset_ms, u.source, u.accepted, u.rejected, u.pruned_at, u.ts_from, u.ts_to, u.config_ts_from,
                       u.config_ts_to
                FROM bundle u\(unsafeRaw: layout.clientJoin) WHERE u.id > \(after) ORDER BY u.id LIMIT \(Int64(StoreCopy.bundlesPerPage))
                """)
            guard let first = try rows.first?.decode(at: 0, as: Int64.self), let last = try rows.last?.decode(at: 0, as: Int64.self) else {
                return
            }
            after = last
            var rejected: [Int64: [CopiedRejectedLine]] = [:]
            for row in try self.rows(
                "SELECT bundle_ref, line, reason, raw FROM rejected_line WHERE bundle_ref BETWEEN \(first) AND \(last) ORDER BY bundle_ref, id"
            ) {
                rejected[try row.decode(at: 0), default: []].append(
                    CopiedRejectedLine(
                        line: try row.decode(at: 1), reason: try row.decode(at: 2), raw: try row.decode(at: 3, as: SQLBytes.self).bytes))
            }
            var page: [CopiedBundle] = []
            var bytes = 0
            for row in rows {
                let id: Int64 = try row.decode(at: 0)
                var bundle = CopiedBundle(
                    appID: try row.decode(at: 1), bundleID: try row.decode(at: 2), receivedAt: try row.decode(at: 10),
                    clockOffsetMs: try row.decode(at: 11))
                bundle.deviceID = try row.decode(at: 3)
                (bundle.appVersion, bundle.build, bundle.os) = (try row.decode(at: 4), try row.decode(at: 5), try row.decode(at: 6))
                (bundle.deviceModel, bundle.sdk, bundle.uploadedAt) = (try row.decode(at: 7), try row.decode(at: 8), try row.decode(at: 9))
                (bundle.source, bundle.accepted, bundle.rejected) = (try row.decode(at: 12), try row.decode(at: 13), try row.decode(at: 14))
                (bundle.prunedAt, bundle.tsFrom, bundle.tsTo) = (try row.decode(at: 15), try row.decode(at: 16), try row.decode(at: 17))
                (bundle.configTsFrom, bundle.configTsTo) = (try row.decode(at: 18), try row.decode(at: 19))
                for block in try self.rows(
                    """
                    SELECT b.id, b.lines, b.raw_bytes, b.dictionary, b.data FROM bundle u JOIN record_block b ON \(unsafeRaw: layout.blocksOfBundle)
                    WHERE u.id = \(id) ORDER BY b.id
                    """)
                {
                    let (blockID, lines, rawBytes): (Int64, Int64, Int64) = (
                        try block.decode(at: 0), try block.decode(at: 1), try block.decode(at: 2)
                    )
                    let data = try block.decode(at: 4, as: SQLBytes.self).bytes
                    let stored = StoredBlockRow(
                        id: blockID, lines: Int(lines), rawBytes: Int(rawBytes), data: data, appID: bundle.appID,
                        deviceID: bundle.deviceID, clockOffsetMs: bundle.clockOffsetMs)
                    bundle.blocks.append(
                        CopiedBlock(
                            id: blockID, lines: lines, rawBytes: rawBytes, dictionary: try block.decode(at: 3), data: data,
                            keys: CopiedBlock.keys(of: stored, reader: reader)))
                    bytes += data.count
                }
                bundle.rejectedLines = rejected[id] ?? []
                page.append(bundle)
                if bytes >= StoreCopy.bytesPerPage {
                    try part(.bundles(page))
                    page.removeAll()
                    bytes = 0
                }
            }
            if !page.isEmpty { try part(.bundles(page)) }
        }
    }

    /// Whether a table of ``StoreCopy/countedTables`` holds a row: the first that does, or nil.
    package func firstNonEmptyCopiedTable() throws -> String? {
        for table in StoreCopy.countedTables {
            if try rows("SELECT EXISTS (SELECT 1 FROM \(unsafeRaw: table))").first?.decode(at: 0, as: Bool.self) == true { return table }
        }
        return nil
    }

    /// The first parts of a copy, read out in the caller's snapshot: how many bundles follow, the dictionaries, then
    /// the config bodies a page at a time, each with its digest. A body a store from before digests kept as text is
    /// compressed and given its digest as ingest would now; `dictionary` finds a block dictionary by its Adler-32.
    package func copyOutLeading(
        dictionary: (UInt32) -> [UInt8]?, pageSize: Int, _ part: (CopiedPart) throws -> Void
    ) throws {
        try part(.bundleCount(rows("SELECT count(*) FROM bundle").first?.decode(at: 0) ?? 0))
        try part(
            .dictionaries(
                rows("SELECT id, app_id, adler32, trained_at, bytes FROM dictionary ORDER BY id").map {
                    CopiedDictionary(
                        id: try $0.decode(at: 0), appID: try $0.decode(at: 1), adler32: try $0.decode(at: 2),
                        trainedAt: try $0.decode(at: 3), bytes: try $0.decode(at: 4, as: SQLBytes.self).bytes)
                }))
        var after: Int64 = .min
        while true {
            let page = try rows(
                "SELECT id, digest, app_group, body FROM config_body WHERE id > \(after) ORDER BY id LIMIT \(Int64(pageSize))"
            ).map { row -> CopiedConfigBody in
                let (id, digest, appGroup, body): (Int64, Int64?, String?, SQLValue) =
                    (try row.decode(at: 0), try row.decode(at: 1), try row.decode(at: 2), row.values[3])
                if let digest, case .bytes(let bytes) = body {
                    return CopiedConfigBody(id: id, digest: digest, appGroup: appGroup, body: bytes)
                }
                let line = try ConfigBody.text(stored: body, dictionaries: dictionary)
                return CopiedConfigBody(
                    id: id, digest: ConfigBodyDigest.of(line), appGroup: appGroup, body: ConfigBody.compressed(line, dictionary: .none))
            }
            guard let last = page.last else { return }
            try part(.configBodies(page))
            after = last.id
            if page.count < pageSize { return }
        }
    }
}
