import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceStore

extension PostgresStore {
    /// `pushtrace sql`: one statement in a read-only transaction with a statement timeout, as a role that can only
    /// `SELECT`, so that nothing can be written through it and a runaway query ends. Rows are collected by the
    /// connection, then handed on; the column names come first, an empty answer's too.
    public func readOnlyQuery(
        _ sql: String, columns: ([String]) throws -> Void,
        row: ([QueryValue]) throws -> Void
    ) throws {
        // Through a pooler in transaction mode the server connection outlives this one, and a setting the statement
        // made for its session (set_config(…, false), a session lock) would reach the servers' own transactions.
        if poolMode == .transaction { throw StoreError.needsDirectConnection }
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
                if let role = unsafe.first { throw StoreError.unsafeReader(role) }
                do {
                    try session.query("SELECT set_config('role', current_database() || '_reader', true)")
                } catch let error as PSQLError where ["22023", "42501", "42704"].contains(error.serverInfo?[.sqlState] ?? "") {
                    throw StoreError.noReader(error.serverInfo?[.message] ?? "")
                }
                let answer: (columns: [String], rows: [PostgresRow])
                do {
                    answer = try session.namedRows(PostgresQuery(unsafeSQL: sql))
                } catch let error as PSQLError where error.code == .server {
                    if error.serverInfo?[.sqlState] == "25006" { throw StoreError.wouldWrite }
                    throw StoreError.invalidQuery(error.serverInfo?[.message] ?? "PostgreSQL refused the statement")
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
