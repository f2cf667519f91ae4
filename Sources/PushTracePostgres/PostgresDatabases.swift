import Foundation
import Logging
import PostgresNIO
import PushTraceStore

/// Creating and dropping whole databases of a cluster: what the tests and the benchmarks use to give each store a
/// database of its own.
package enum PostgresDatabases {
    /// Creates the database `name` (letters, digits and `_` only) on the cluster `url` reaches; returns the URL of
    /// the new database.
    package static func create(_ name: String, cluster url: String) throws -> String {
        try run("CREATE DATABASE \(try quoted(name))", cluster: url)
        guard var components = URLComponents(string: url) else { throw StoreError.badURL("not a URL") }
        components.path = "/" + name
        return components.string!
    }

    /// Creates the database `name` owned by a new login role `role` with `password`, and returns its URL as that
    /// role: a store reached with a password of its own, which tests then look for in every output.
    package static func create(_ name: String, cluster url: String, role: String, password: String) throws -> String {
        guard password.utf8.allSatisfy({ $0 != UInt8(ascii: "'") && $0 != UInt8(ascii: "\\") && $0 >= 0x20 }) else {
            throw StoreError.badURL("a password without quotes, backslashes or control characters is needed")
        }
        // Created by a role with CREATEROLE, which must then be a member of it to give it a database.
        try run("CREATE ROLE \(try quoted(role)) LOGIN PASSWORD '\(password)'", cluster: url)
        try run("GRANT \(try quoted(role)) TO CURRENT_USER", cluster: url)
        try run("CREATE DATABASE \(try quoted(name)) OWNER \(try quoted(role))", cluster: url)
        guard var components = URLComponents(string: url) else { throw StoreError.badURL("not a URL") }
        components.path = "/" + name
        components.user = role
        components.password = password
        return components.string!
    }

    /// Drops the login role `role` (after its databases).
    package static func dropRole(_ role: String, cluster url: String) throws {
        try run("DROP ROLE IF EXISTS \(try quoted(role))", cluster: url)
    }

    /// Stops `role` from logging in and closes its connections: a database that refuses the store from now on, as
    /// a revoked role or a changed password would.
    package static func refuseLogins(_ role: String, cluster url: String) throws {
        try run("ALTER ROLE \(try quoted(role)) NOLOGIN", cluster: url)
        try run(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(try quoted(role).dropFirst().dropLast())'",
            cluster: url)
    }

    /// Drops the database `name`, closing what is connected to it.
    package static func drop(_ name: String, cluster url: String) throws {
        try run("DROP DATABASE IF EXISTS \(try quoted(name)) WITH (FORCE)", cluster: url)
    }

    private static func quoted(_ name: String) throws -> String {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x61...0x7a).contains($0) })
        else { throw StoreError.badURL("a database name of lower-case letters, digits and _ is needed") }
        return "\"\(name)\""
    }

    /// Runs one statement in the database `url` names, as its user: what an administrator would type into psql.
    package static func execute(_ sql: String, on url: String) throws {
        try run(sql, cluster: url)
    }

    private static func run(_ sql: String, cluster url: String) throws {
        let connections = PostgresConnections(
            location: try PostgresLocation(url: url), limit: 1,
            logger: Logger(label: "pushtrace.postgres"))
        defer { connections.close() }
        try connections.withSession(reusable: false) { session in _ = try session.query(PostgresQuery(unsafeSQL: sql)) }
    }
}
