import Foundation
import PushTracePostgres
import PushTraceStore
import PushTraceTestSupport
import Testing

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
        #expect(try PostgresLocation(url: "postgres://h/d", environment: [:]).sslMode == .prefer)
        for (url, words) in [
            ("postgres://h/d?sslmode=sometimes", "sslmode must be one of"),
            ("postgres://h/d?search_path=x", "search_path is not one pushtrace reads"),
            ("postgres://h:0/d", "port"), ("postgres://h/d?connect_timeout=0", "connect_timeout"),
        ] {
            #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: url, environment: [:]) }
            do { _ = try PostgresLocation(url: url, environment: [:]) } catch {
                #expect("\(error)".contains(words), "\(url): \(error)")
            }
        }
    }

    @Test(
        "sslmode=require and verify-full reach a server with a self-signed certificate over TLS; verify-full without its authority is refused; disable speaks plain TCP",
        .enabled(if: TestEngine.postgresCluster != nil && ProcessInfo.processInfo.environment["PUSHTRACE_TEST_POSTGRES_CA"] != nil))
    func tls() throws {
        let cluster = try #require(TestEngine.postgresCluster)
        let authority = try #require(ProcessInfo.processInfo.environment["PUSHTRACE_TEST_POSTGRES_CA"])
        func usesTLS(_ query: String) throws -> Bool {
            let store = try PostgresStore(url: cluster + "?" + query, environment: [:])
            defer { try? store.close() }
            var answer: [QueryValue] = []
            try store.readOnlyQuery("SELECT ssl::int FROM pg_stat_ssl WHERE pid = pg_backend_pid()", columns: { _ in }) { answer = $0 }
            return answer == [.integer(1)]
        }
        #expect(try usesTLS("sslmode=require"))
        #expect(try usesTLS("sslmode=verify-full&sslrootcert=\(authority)"))
        #expect(try usesTLS("sslmode=verify-ca&sslrootcert=\(authority)"))
        #expect(try !usesTLS("sslmode=disable"))
        // The system's authorities never signed the test server's certificate.
        #expect(throws: (any Error).self) { try usesTLS("sslmode=verify-full") }
    }
}
