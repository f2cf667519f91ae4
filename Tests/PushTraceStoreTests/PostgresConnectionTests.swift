import Foundation
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTracePostgres

/// Reaching a PostgreSQL store: the URL, the `PG*` variables, TLS.
@Suite("PostgreSQL: connection settings and TLS")
struct PostgresConnectionTests {
    @Test("the URL's gaps are filled from PG* variables; the password never shows; bad settings are named")
    func location() throws {
        let full = try PostgresLocation(
            url: "postgres://app:secret@db.internal:6543/traces?sslmode=verify-full&sslrootcert=/ca.pem",
            environment: [:])
        #expect(full.host == "db.internal" && full.port == 6543 && full.user == "app" && full.password == "secret")
        #expect(full.database == "traces" && full.sslMode == .verifyFull && full.sslRootCertificate == "/ca.pem")
        #expect(full.description == "postgres://app@db.internal:6543/traces")
        let gaps = try PostgresLocation(
            url: "postgresql:///",
            environment: [
                "PGHOST": "10.0.0.5", "PGPORT": "5433", "PGUSER": "ops", "PGPASSWORD": "pw", "PGDATABASE": "pt", "PGSSLMODE": "require",
            ])
        #expect(gaps.host == "10.0.0.5" && gaps.port == 5433 && gaps.user == "ops" && gaps.password == "pw")
        #expect(gaps.database == "pt" && gaps.sslMode == .require)
        // Unset, sslmode checks the certificate and the host name for any host off this machine, and is off on loopback.
        for (host, mode) in [
            ("db.internal", PostgresLocation.SSLMode.verifyFull), ("10.0.0.5", .verifyFull), ("127.0.0.2", .disable),
            ("localhost", .disable), ("[::1]", .disable), ("127.0.0.1.example.com", .verifyFull),
        ] {
            #expect(try PostgresLocation(url: "postgres://\(host)/d", environment: [:]).sslMode == mode, "\(host)")
        }
        #expect(try PostgresLocation(url: "postgres://localhost/d?sslrootcert=/ca.pem", environment: [:]).sslMode == .verifyFull)
        #expect(try PostgresLocation(url: "postgres://h/d?sslrootcert=system", environment: [:]).sslMode == .verifyFull)
        for (url, words) in [
            ("postgres://h/d?sslmode=sometimes", "sslmode must be one of"),
            // What libpq refuses, or what would check less than it seems to.
            ("postgres://h/d?sslmode=verify-ca", "sslmode=verify-ca needs sslrootcert"),
            ("postgres://h/d?sslmode=prefer&sslrootcert=/ca.pem", "sslmode=prefer never checks"),
            ("postgres://h/d?sslmode=disable&sslrootcert=/ca.pem", "sslmode=disable never checks"),
            ("postgres://h/d?sslmode=require&sslrootcert=system", "sslrootcert=system trusts every public authority"),
            ("postgres://h/d?sslmode=verify-ca&sslrootcert=system", "needs sslmode=verify-full"),
            ("postgres://h/d?search_path=x", "search_path is not one pushtrace reads"),
            ("postgres://h:0/d", "port"), ("postgres://h/d?connect_timeout=0", "connect_timeout"),
        ] {
            #expect { try PostgresLocation(url: url, environment: [:]) } throws: { ($0 as? StoreError)?.code == .badURL }
            do { _ = try PostgresLocation(url: url, environment: [:]) } catch {
                #expect("\(error)".contains(words), "\(url): \(error)")
            }
        }
    }

    @Test(
        "each sslmode against a server whose certificate an authority made for the test signed for localhost: verified, or refused with a clear message for a wrong host name, an unknown authority and a server without TLS",
        .enabled(if: TestEngine.postgresCluster != nil && ProcessInfo.processInfo.environment["PUSHTRACE_TEST_POSTGRES_CA"] != nil))
    func tls() throws {
        let environment = ProcessInfo.processInfo.environment
        let cluster = try #require(TestEngine.postgresCluster)
        let authority = try #require(environment["PUSHTRACE_TEST_POSTGRES_CA"])
        let otherAuthority = try #require(environment["PUSHTRACE_TEST_POSTGRES_OTHER_CA"])
        // The certificate names localhost, not 127.0.0.1.
        let byName = cluster.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:")
        func usesTLS(_ url: String) throws -> Bool {
            let store = try PostgresStore(url: url, environment: [:])
            defer { try? store.close() }
            // As the connection's own role: `pushtrace sql`'s reader may not see the connection's TLS.
            return try store.withSession {
                try $0.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").first(where: { _ in true })!.decode(Bool.self)
            }
        }
        func refusal(_ url: String) -> String {
            do {
                _ = try usesTLS(url)
                return "connected"
            } catch {
                return "\(error)"
            }
        }
        #expect(try usesTLS(cluster + "?sslmode=require"))
        #expect(try usesTLS(byName + "?sslmode=verify-full&sslrootcert=\(authority)"))
        #expect(try usesTLS(byName + "?sslrootcert=\(authority)"))
        #expect(try usesTLS(cluster + "?sslmode=verify-ca&sslrootcert=\(authority)"))
        #expect(try usesTLS(cluster + "?sslmode=require&sslrootcert=\(authority)"))
        #expect(try usesTLS(cluster + "?sslmode=prefer"))
        // Unset on loopback: plain, the link never leaving the machine.
        #expect(try !usesTLS(cluster))
        #expect(try !usesTLS(cluster + "?sslmode=disable"))

        let wrongHost = refusal(cluster + "?sslmode=verify-full&sslrootcert=\(authority)")
        #expect(wrongHost.contains("the server's certificate does not name the host the URL gives"), "\(wrongHost)")
        for url in [
            byName + "?sslmode=verify-full&sslrootcert=\(otherAuthority)", byName + "?sslmode=verify-ca&sslrootcert=\(otherAuthority)",
            byName + "?sslmode=require&sslrootcert=\(otherAuthority)",
            // The system's authorities never signed the test server's certificate.
            byName + "?sslmode=verify-full", byName + "?sslrootcert=system",
        ] {
            let unknown = refusal(url)
            #expect(unknown.contains("the server's certificate is not signed by an authority this link trusts"), "\(url): \(unknown)")
            #expect(!unknown.contains("pushtrace:pushtrace@"), "the password shows: \(unknown)")
        }
        if let bouncer = environment["PUSHTRACE_TEST_PGBOUNCER"] {
            // PgBouncer speaks plain TCP to its clients unless told otherwise: a server that offers no TLS.
            let plaintext = refusal(bouncer + "?sslmode=require")
            #expect(plaintext.contains("the server offers no TLS, and the URL's sslmode requires it"), "\(plaintext)")
            #expect(
                refusal(
                    bouncer.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:") + "?sslmode=verify-full&sslrootcert=\(authority)"
                )
                .contains("the server offers no TLS"))
        }
    }
}
