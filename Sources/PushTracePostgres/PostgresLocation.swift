import Foundation
import NIOSSL
import PostgresNIO
import PushTraceStore

/// Where a PostgreSQL store lives and how to reach it: a `postgres://` URL (docs/spec.md §9), with what it leaves out taken
/// from the standard `PG*` variables, as `psql` would.
///
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE&sslrootcert=FILE&connect_timeout=SECONDS`. Only TCP
/// is spoken (no Unix socket). `sslmode` is libpq's: `disable`, `allow` and `prefer` (TLS when the server offers it,
/// unverified), `require` (TLS, unverified unless `sslrootcert` is given), `verify-ca` (TLS, the certificate signed
/// by `sslrootcert`) and `verify-full` (signed by `sslrootcert`, or by the system's authorities, and naming the
/// host). Unset, it is `disable` on loopback and `verify-full` for any other host (docs/security.md, the database
/// link).
public struct PostgresLocation: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// The certificate authorities the server's certificate is checked against (`verify-ca`, `verify-full`); the
    /// system's when nil.
    public var sslRootCertificate: String?
    public var connectTimeoutSeconds: Int64
    /// The pooler between pushtrace and PostgreSQL, if the URL names one (`pool_mode`, as PgBouncer calls it).
    public var poolMode: PoolMode?

    /// How a pooler in between lends server connections: for a session (the client's for as long as it is
    /// connected), or for a transaction, after which another client may get it, so that nothing may outlive a
    /// transaction: neither a prepared statement nor a session's lock.
    public enum PoolMode: String, Sendable, CaseIterable {
        case session, transaction
    }

    /// libpq's `sslmode`.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// The URL read, its gaps filled from `environment` (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`,
    /// `PGSSLMODE`, `PGSSLROOTCERT`, `PGCONNECT_TIMEOUT`). Throws a message naming what is wrong.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw StoreError.badURL("not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        let env = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? env("PGHOST") ?? "localhost"
        if host.hasPrefix("/") { throw StoreError.badURL("the host is a Unix socket folder; give a TCP host name or address") }
        if let port = components.port {
            self.port = port
        } else if let text = env("PGPORT") {
            guard let port = Int(text) else { throw StoreError.badURL("PGPORT is not a port number") }
            self.port = port
        } else {
            port = 5432
        }
        guard (1...65_535).contains(port) else { throw StoreError.badURL("the port is not between 1 and 65535") }
        user = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? env("PGUSER") ?? env("USER") ?? "postgres"
        password = components.password ?? env("PGPASSWORD")
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? (env("PGDATABASE") ?? user) : path
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let known: Set = ["sslmode", "sslrootcert", "connect_timeout", "application_name", "pool_mode"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw StoreError.badURL(
                "the URL parameter \(unknown) is not one pushtrace reads (it reads sslmode, "
                    + "sslrootcert, connect_timeout, pool_mode)")
        }
        if let mode = query["pool_mode"] {
            guard let named = PoolMode(rawValue: mode) else {
                throw StoreError.badURL("pool_mode must be session or transaction (PgBouncer's pool_mode)")
            }
            poolMode = named
        } else {
            poolMode = nil
        }
        let rootCertificate = query["sslrootcert"] ?? env("PGSSLROOTCERT")
        let sslMode: SSLMode
        if let mode = query["sslmode"] ?? env("PGSSLMODE") {
            guard let named = SSLMode(rawValue: mode) else {
                throw StoreError.badURL("sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            sslMode = named
        } else {
            // Off this machine, an unverified link would let whoever sits on the path read every app's data or answer
            // the token lookup, so the default checks the certificate and the host name, as libpq's should. On
            // loopback the link never leaves the machine: TLS there would protect nothing and cost the writer's
            // event loop most of its time (decrypting many small answers), so it is off unless asked for.
            sslMode = rootCertificate == nil && Self.isLoopback(host) ? .disable : .verifyFull
        }
        try Self.refuseIgnored(rootCertificate: rootCertificate, under: sslMode)
        self.sslMode = sslMode
        sslRootCertificate = rootCertificate
        let timeout = query["connect_timeout"] ?? env("PGCONNECT_TIMEOUT") ?? "10"
        guard let seconds = Int64(timeout), seconds > 0, seconds <= 3_600 else {
            throw StoreError.badURL("connect_timeout must be a number of seconds from 1 to 3600")
        }
        connectTimeoutSeconds = seconds
    }

    /// The URL without its password: what logs and messages show.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)@\(shownHost):\(port)/\(database)"
    }

    /// postgres-nio's configuration for a connection.
    func configuration() throws -> PostgresConnection.Configuration {
        let (tls, required) = try tlsSettings()
        let context: NIOSSLContext?
        do { context = try tls.map(NIOSSLContext.init(configuration:)) } catch {
            throw StoreError.badURL("cannot set up TLS: \(error)")
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database,
            tls: context.map { required ? .require($0) : .prefer($0) } ?? .disable)
        configuration.options.connectTimeout = .seconds(connectTimeoutSeconds)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// The same server, credentials, TLS and settings as ``configuration()``, for a `PostgresClient` that pools at
    /// most `connections`.
    func clientConfiguration(connections: Int) throws -> PostgresClient.Configuration {
        _ = try configuration()  // what the URL says that cannot work fails here, not at the first connection
        let (tls, required) = try tlsSettings()
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database,
            tls: tls.map { required ? .require($0) : .prefer($0) } ?? .disable)
        configuration.options.connectTimeout = .seconds(connectTimeoutSeconds)
        configuration.options.additionalStartupParameters = startupParameters
        configuration.options.maximumConnections = max(1, connections)
        // One kept open: postgres-nio opens a connection for waiting leases only below the minimum, so with none
        // kept, leases queued when every connection closed would wait for the next lease to come.
        configuration.options.minimumConnections = 1
        return configuration
    }

    /// PostgreSQL probes an idle connection, so that a server whose machine vanished mid-transaction gives its row
    /// locks back within a couple of minutes rather than TCP's hours. A pooler refuses these settings (its own
    /// tcp_keepalive settings stand for them).
    private var startupParameters: [(String, String)] {
        [("application_name", "pushtrace")]
            + (poolMode != nil
                ? [] : [("tcp_keepalives_idle", "30"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "6")])
    }

    /// `sslrootcert=system`: the system's certificate authorities, as libpq 16 names them (only with `verify-full`).
    static let systemRoots = "system"

    /// A host on this machine: `localhost` and the loopback addresses.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The settings libpq refuses, or that would check less than they seem to: a root certificate no mode reads,
    /// `verify-ca` with no root certificate (any public authority's certificate, for any name, would pass), and
    /// `sslrootcert=system` without the host name check.
    private static func refuseIgnored(rootCertificate: String?, under mode: SSLMode) throws {
        switch (mode, rootCertificate) {
        case (.disable, .some), (.allow, .some), (.prefer, .some):
            throw StoreError.badURL(
                "sslrootcert is given, but sslmode=\(mode.rawValue) never checks the server's certificate against it; "
                    + "use sslmode=verify-full (or verify-ca)")
        case (.verifyCA, nil):
            throw StoreError.badURL(
                "sslmode=verify-ca needs sslrootcert, the authority that signed the server's certificate: with the "
                    + "system's authorities, a certificate any of them signed for any name would pass; give "
                    + "sslrootcert=FILE, or use sslmode=verify-full, which also checks the host name")
        case (.require, systemRoots), (.verifyCA, systemRoots):
            throw StoreError.badURL(
                "sslrootcert=system trusts every public authority, so it needs sslmode=verify-full, which checks the "
                    + "host name too")
        default:
            return
        }
    }

    /// The TLS the URL asks for (nil: none), and whether the link must have it.
    private func tlsSettings() throws -> (TLSConfiguration?, required: Bool) {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable: return (nil, false)
        case .allow, .prefer: tls.certificateVerification = .none
        // libpq checks the chain under `require` when a root certificate is given, as `verify-ca` does.
        case .require: tls.certificateVerification = sslRootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let file = sslRootCertificate, file != Self.systemRoots {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            } catch {
                throw StoreError.badURL("cannot read the certificates of sslrootcert \(file): \(error)")
            }
        }
        return (tls, sslMode == .require || sslMode == .verifyCA || sslMode == .verifyFull)
    }
}
