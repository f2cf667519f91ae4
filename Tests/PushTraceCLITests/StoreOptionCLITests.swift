import Foundation
import PushTracePostgres
import PushTraceTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which store a command uses.
@Suite("CLI: the store option")
struct StoreOptionCLITests {
    @Test("PUSHTRACE_DB names the store for every command, as --db does (docs/spec.md §7); --db wins over it")
    func storeFromEnvironment() throws {
        let work = try WorkFolder()
        #expect(try work.run("simulate", "--out", "sim", "--notifications", "10", "--end", "2026-11-16T00:00:00Z").status == 0)
        #expect(try work.run(["ingest", "sim"], environment: ["PUSHTRACE_DB": "elsewhere.sqlite"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: work.url.appendingPathComponent("elsewhere.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: work.url.appendingPathComponent("pushtrace.sqlite").path))
        let found = try work.run(["search", "--format", "json"], environment: ["PUSHTRACE_DB": "elsewhere.sqlite"])
        #expect(found.status == 0 && found.stdout.contains("notification_id"))
        let exported = try work.run(["export"], environment: ["PUSHTRACE_DB": "elsewhere.sqlite"])
        #expect(exported.status == 0 && !exported.stdout.isEmpty)
        let flagWins = try work.run(["search", "--db", "missing.sqlite"], environment: ["PUSHTRACE_DB": "elsewhere.sqlite"])
        #expect(flagWins.status == 2 && flagWins.stderr.contains("missing.sqlite"))
    }

    @Test(
        "no output holds the database password: messages and the server's log show the URL without it, and a password on the command line is warned of",
        .enabled(if: TestEngine.postgresCluster != nil))
    func passwordNeverShown() async throws {
        let cluster = try #require(TestEngine.postgresCluster)
        let suffix = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let (name, role, password) = ("pt_" + suffix, "pt_role_" + suffix, "Hunter2-" + suffix)
        let url = try PostgresDatabases.create(name, cluster: cluster, role: role, password: password)
        defer {
            try? PostgresDatabases.drop(name, cluster: cluster)
            try? PostgresDatabases.dropRole(role, cluster: cluster)
        }
        let work = try WorkFolder()
        var outputs: [String] = []
        func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Executable.Output {
            let output = try work.run(arguments, environment: environment)
            outputs.append(output.stdout + output.stderr)
            return output
        }
        // The URL on the command line: each command works, warns, and names the store without the password.
        let created = try run(["token", "create", "--db", url, "--scope", "admin", "--label", "password test"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stderr.contains("PGPASSWORD") && created.stderr.contains("pushtrace.env"), "\(created.stderr)")
        let sent = try run([
            "send-event", "push.sent", "--db=\(url)", "--app", "net.rorklab.dailypick", "--id", "n-1", "--category", "DAILY_PICK",
            "--payload-bytes", "300",
        ])
        #expect(sent.status == 0 && sent.stdout.contains("stored in postgres://\(role)@"), "\(sent.stdout)\(sent.stderr)")
        try work.write("payload.json", [#"{"aps":{"alert":{"title":"Pick"},"category":"DAILY_PICK","mutable-content":1}}"#])
        let linted = try run(["lint", "payload.json", "--app", "com.example.none", "--db", url])
        #expect(linted.stderr.contains("is stored in postgres://\(role)@"), "\(linted.stderr)")
        let unknown = try run(["search", "--app", "com.example.none", "--db", url])
        #expect(unknown.status == 2 && unknown.stderr.contains("(in postgres://\(role)@"), "\(unknown.stderr)")
        // From PUSHTRACE_DB, as the service's environment file gives it: no warning.
        let fromEnvironment = try run(["search", "--app", "net.rorklab.dailypick"], environment: ["PUSHTRACE_DB": url])
        #expect(fromEnvironment.status == 0 && !fromEnvironment.stderr.contains("PGPASSWORD"), "\(fromEnvironment.stderr)")
        // The server's log names the store it serves.
        let server = try await ServerProcess(arguments: ["--db", url], in: work.url)
        // A database that refuses the store: 503 in the server's words, PostgreSQL's own only in the log.
        try PostgresDatabases.refuseLogins(role, cluster: cluster)
        var request = URLRequest(url: URL(string: "\(server.url)/v1/notifications/n-1")!)
        request.setValue("Bearer \(created.stdout.trimmingCharacters(in: .whitespacesAndNewlines))", forHTTPHeaderField: "Authorization")
        let (body, response) = try await URLSession.shared.data(for: request)
        let answer = String(decoding: body, as: UTF8.self)
        outputs.append(answer)
        #expect((response as? HTTPURLResponse)?.statusCode == 503, "\(answer)")
        #expect(answer.contains("the store cannot answer") && answer.contains("request_id"), "\(answer)")
        #expect(!answer.contains("PostgreSQL") && !answer.contains(role) && !answer.contains("login"), "\(answer)")
        #expect(server.stop() == 0)
        let log = String(decoding: server.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        outputs.append(log)
        #expect(log.contains("postgres://\(role)@127.0.0.1"), "\(log)")
        for output in outputs { #expect(!output.contains(password), "\(output)") }
    }
}
