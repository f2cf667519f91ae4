import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceStore

extension PostgresStore {
    /// How many blocks an export or a check reads per query: memory stays bounded by a page of blocks.
    static let blocksPerPage: Int64 = 64

    /// Every accepted line `filter` selects, in the order stored, one at a time, in one snapshot (repeatable read).
    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        try reading { session in
            let reader = PostgresDiagnosisReader(session, store: self)
            if let id = filter.notificationID {
                let key = NotificationKey.normalize(id)
                let apps = try filter.appID.map { [$0] } ?? AppRows.uploading(session)
                var found: [StoredLine] = []
                for app in apps {
                    found += try reader.lines(appID: app, notificationID: key).filter { filter.includes(correctedTs: $0.ts) }
                }
                for stored in found.sorted(by: { ($0.block, $0.index) < ($1.block, $1.index) }) {
                    try line(ExportedLine(body: stored.body, correctedTs: stored.ts))
                }
                return
            }
            let lines = StoredLineReader { [dictionaries] in dictionaries.lookup($0, session) }
            try forEachBlock(session, appID: filter.appID, since: filter.since, until: filter.until) { block in
                try lines.forEachLineTime(of: block) { body, ts in
                    if filter.includes(correctedTs: ts) { try line(ExportedLine(body: body, correctedTs: ts)) }
                }
            }
        }
    }

    /// The blocks of bundles whose time span meets the range (all when none), of one app or every app, in the order
    /// stored, a page at a time.
    func forEachBlock(
        _ session: PostgresSession, appID: String?, since: Int64?, until: Int64?,
        _ body: (StoredBlockRow) throws -> Void
    ) throws {
        let span = BundleTimeSpan.overlapCondition(since: since, until: until)
        var after: Int64 = 0
        while true {
            var binds = PostgresBindings()
            binds.append(after)
            var conditions = ["b.id > $1"]
            if let appID {
                binds.append(appID)
                conditions.append("u.app_id = $\(binds.count)")
            }
            var spanSQL = span.sql
            for argument in span.arguments {
                binds.append(argument)
                spanSQL = spanSQL.replacingFirst("?", with: "$\(binds.count)")
            }
            conditions.append(spanSQL == "1" ? "true" : spanSQL)
            binds.append(Self.blocksPerPage)
            let rows = try session.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT \(Self.blockColumns) FROM record_block b JOIN bundle u ON u.id = b.bundle_ref
                        WHERE \(conditions.joined(separator: " AND ")) ORDER BY b.id LIMIT $\(binds.count)
                        """, binds: binds))
            var count = 0
            for row in rows {
                let block = try Self.blockRow(row)
                try body(block)
                after = block.id
                count += 1
            }
            if count < Self.blocksPerPage { return }
        }
    }

    /// Reads every block back and recounts what is kept about its lines (as the SQLite engine's check does), in one
    /// snapshot.
    public func check() throws -> StoreCheck {
        try reading { session in
            var check = StoreCheck()
            let reader = StoredLineReader { [dictionaries] in dictionaries.lookup($0, session) }
            var perBundle: [Int64: Int] = [:]
            var perNotification: [String: [String: Int]] = [:]
            var indexed: Set<IndexEntry> = []
            var after: Int64 = 0
            while true {
                let rows = try session.query(
                    """
                    SELECT \(unescaped: Self.blockColumns), b.bundle_ref FROM record_block b JOIN bundle u ON u.id = b.bundle_ref
                    WHERE b.id > \(after) ORDER BY b.id LIMIT \(Self.blocksPerPage)
                    """)
                var count = 0
                var pageEntries: [(key: Int64, block: Int64)] = []
                for row in rows {
                    count += 1
                    let block = try Self.blockRow(row)
                    let bundle = try row.makeRandomAccess()[7].decode(Int64.self)
                    after = block.id
                    check.blocks += 1
                    var lines = 0
                    var keys: Set<Int64> = []
                    do {
                        try reader.forEachLine(of: block) { line in
                            lines += 1
                            guard let id = line.notificationID else { return }
                            let key = NotificationBlockKey.of(appID: line.appID, notificationID: id)
                            if keys.insert(key).inserted { pageEntries.append((key, block.id)) }
                            perNotification[line.appID, default: [:]][id, default: 0] += 1
                        }
                    } catch {
                        check.unreadableBlocks += 1
                    }
                    check.records += lines
                    perBundle[bundle, default: 0] += lines
                }
                if !pageEntries.isEmpty {
                    indexed.removeAll(keepingCapacity: true)
                    for row in try session.query(
                        """
                        SELECT key, block FROM notification_block
                        WHERE (key, block) IN (SELECT * FROM unnest(\(pageEntries.map(\.key))::bigint[], \(pageEntries.map(\.block))::bigint[]))
                        """)
                    {
                        let (key, block) = try row.decode((Int64, Int64).self)
                        indexed.insert(IndexEntry(key: key, block: block))
                    }
                    check.unindexedLines += pageEntries.filter { !indexed.contains(IndexEntry(key: $0.key, block: $0.block)) }.count
                }
                if count < Self.blocksPerPage { break }
            }
            for row in try session.query("SELECT id, accepted FROM bundle WHERE pruned_at IS NULL") {
                let (id, accepted) = try row.decode((Int64, Int64).self)
                if perBundle[id, default: 0] != Int(accepted) { check.miscountedBundles += 1 }
            }
            check.orphanBlocks = Int(
                try session.query(
                    """
                    SELECT count(*) FROM record_block r WHERE NOT EXISTS (SELECT 1 FROM bundle b WHERE b.id = r.bundle_ref)
                    """
                ).first(where: { _ in true })!.decode(Int64.self))
            let pruned = try session.query("SELECT EXISTS (SELECT 1 FROM bundle WHERE pruned_at IS NOT NULL)")
                .first(where: { _ in true })!.decode(Bool.self)
            for row in try session.query("SELECT app_id, notification_id, records FROM notification") {
                let (app, id, records) = try row.decode((String, String, Int64).self)
                if let counted = perNotification[app]?.removeValue(forKey: id) {
                    if counted != Int(records) { check.miscountedNotifications += 1 }
                } else if !pruned {
                    check.miscountedNotifications += 1
                }
            }
            check.miscountedNotifications += perNotification.values.reduce(0) { $0 + $1.count }
            return check
        }
    }

    /// `pushtrace sql`: one statement in a read-only transaction with a statement timeout, as a role that can only
    /// `SELECT`, so that nothing can be written through it and a runaway query ends. Rows are collected by the
    /// connection, then handed on; the column names come first, an empty answer's too.
    public func readOnlyQuery(
        _ sql: String, columns: ([String]) throws -> Void,
        row: ([QueryValue]) throws -> Void
    ) throws {
        // Through a pooler in transaction mode the server connection outlives this one, and a setting the statement
        // made for its session (set_config(…, false), a session lock) would reach the servers' own transactions.
        if poolMode == .transaction { throw ReadOnlyQueryError.needsDirectConnection }
        try connections.withSession(reusable: false) { pooled in
            var session = pooled
            session.deadline = .seconds(90)  // past the statement timeout below
            try session.transaction("READ ONLY") {
                try session.query("SET LOCAL statement_timeout = '60s'")
                // As the role that may only read (migration v5-select-only-reader), not as the tables' owner; a statement
                // that switches back itself stays read-only (docs/security.md). The role is checked here, not only
                // when the migration made or adopted it: earlier texts of that migration adopted any role of its name,
                // and an administrator may have changed it since. A login of its own is allowed (docs/security.md);
                // a role granted it other than the tables' owner (which switches to it) is not.
                let unsafe = try session.query(
                    """
                    SELECT r.rolname::text FROM pg_roles r WHERE r.rolname = current_database() || '_reader'
                    AND (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls
                        OR EXISTS (SELECT FROM pg_auth_members m WHERE m.member = r.oid)
                        OR EXISTS (SELECT FROM pg_auth_members m WHERE m.roleid = r.oid
                            AND m.member <> (SELECT relowner FROM pg_class WHERE oid = to_regclass('pushtrace_migration'))))
                    """
                ).map { try $0.decode(String.self) }
                if let role = unsafe.first { throw ReadOnlyQueryError.unsafeReader(role) }
                do {
                    try session.query("SELECT set_config('role', current_database() || '_reader', true)")
                } catch let error as PSQLError where ["22023", "42501", "42704"].contains(error.serverInfo?[.sqlState] ?? "") {
                    throw ReadOnlyQueryError.noReader(error.serverInfo?[.message] ?? "")
                }
                let answer: (columns: [String], rows: [PostgresRow])
                do {
                    answer = try session.namedRows(PostgresQuery(unsafeSQL: sql))
                } catch let error as PSQLError where error.code == .server {
                    if error.serverInfo?[.sqlState] == "25006" { throw ReadOnlyQueryError.wouldWrite }
                    throw ReadOnlyQueryError.invalid(error.serverInfo?[.message] ?? "PostgreSQL refused the statement")
                }
                try columns(answer.columns)
                for next in answer.rows {
                    let values = next.makeRandomAccess()
                    try row((0..<values.count).map { QueryValue(values[$0]) })
                }
            }
        }
    }
}

private struct IndexEntry: Hashable {
    var key: Int64
    var block: Int64
}

extension QueryValue {
    /// A cell as `pushtrace sql` prints it: integers and floats as numbers, bytea as bytes, anything else as text.
    init(_ cell: PostgresCell) {
        guard cell.bytes != nil else {
            self = .null
            return
        }
        switch cell.dataType {
        case .int2, .int4, .int8: self = (try? cell.decode(Int64.self)).map(QueryValue.integer) ?? .null
        case .float4, .float8: self = (try? cell.decode(Double.self)).map(QueryValue.real) ?? .null
        case .numeric:
            // A sum of integers is numeric in PostgreSQL and an integer in SQLite: a whole number that fits reads as one.
            guard let decimal = try? cell.decode(Decimal.self) else {
                self = .null
                return
            }
            let text = "\(decimal)"
            self = Int64(text).map(QueryValue.integer) ?? Double(text).map(QueryValue.real) ?? .text(text)
        case .bytea: self = (try? cell.decode(ByteBuffer.self)).map { .blob(Array($0.readableBytesView)) } ?? .null
        case .bool: self = (try? cell.decode(Bool.self)).map { .integer($0 ? 1 : 0) } ?? .null
        default: self = (try? cell.decode(String.self)).map(QueryValue.text) ?? .text("(\(cell.dataType))")
        }
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
