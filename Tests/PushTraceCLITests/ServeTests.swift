import Foundation
import PushTraceCore
import PushTraceGzip
import Testing

@Suite("pushtrace serve and --server")
struct ServeTests {
    @Test("why and search with --server print what they print from the local file; SIGTERM shuts down cleanly")
    func remoteReadsMatchLocalReads() async throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", CLITests.server)
        try work.write("device.ndjson.gz", bytes: Deflater.gzip(Array(CLITests.device.map { $0 + "\n" }.joined().utf8)))
        #expect(try work.run("ingest", "server.ndjson", "device.ndjson.gz").status == 0)
        // An admin token: a read token would scope even an unknown ID to its app, which the local answer cannot know.
        let token = try work.run("token", "create", "--scope", "admin")
        #expect(token.status == 0)
        let environment = ["PUSHTRACE_TOKEN": token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)]

        let server = try await ServerProcess(arguments: ["--db", "pushtrace.sqlite"], in: work.url)
        for arguments in [
            ["why", CLITests.id], ["why", CLITests.id, "--format", "json"], ["why", "unknown-id"],
            ["search"], ["search", "--cause", "service_timeout", "--format", "json"],
            ["search", "--app", "net.rorklab.dailypik"],
        ] {
            let local = try work.run(arguments, environment: [:])
            let remote = try work.run(arguments + ["--server", server.url], environment: environment)
            #expect(remote.stdout == local.stdout, "\(arguments)")
            #expect(remote.status == local.status, "\(arguments): \(remote.stderr)")
        }
        let noToken = try work.run(["why", CLITests.id, "--server", server.url], environment: ["PUSHTRACE_TOKEN": ""])
        #expect(noToken.status == 2)
        #expect(noToken.stderr.contains("401"))

        #expect(server.stop() == 0)
        // Closed cleanly: the WAL was checkpointed into the database file.
        let wal = work.url.appendingPathComponent("pushtrace.sqlite-wal").path
        let walSize = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(walSize == 0)
    }

    @Test("a port in use or a host that is not this machine's: exit 2 saying which setting to change")
    func cannotListen() async throws {
        let work = try WorkFolder()
        let server = try await ServerProcess(arguments: ["--no-auth"], in: work.url)
        let taken = try work.run(["serve", "--no-auth", "--port", String(server.port)], environment: [:])
        #expect(taken.status == 2)
        #expect(
            taken.stderr.hasSuffix(
                "pushtrace: cannot listen on 127.0.0.1:\(server.port): the port is in use (another "
                    + "pushtrace serve?); choose another with --port or PUSHTRACE_PORT\n"), "\(taken.stderr)")
        let unknown = try work.run(["serve", "--port", "0"], environment: ["PUSHTRACE_HOST": "nosuch.invalid"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("pushtrace: cannot listen on nosuch.invalid: no such host"), "\(unknown.stderr)")
        #expect(server.stop() == 0)
    }

    @Test("token create prints the token once; list never shows a secret; revoke takes the ID")
    func tokens() throws {
        let work = try WorkFolder()
        let created = try work.run("token", "create", "--app", "net.rorklab.dailypick", "--scope", "ingest", "--label", "ios")
        #expect(created.status == 0)
        let token = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("pt_"))
        #expect(created.stderr.contains("shown only now"))
        let parts = token.split(separator: "_", maxSplits: 2)
        let list = try work.run("token", "list")
        #expect(list.stdout.contains(String(parts[1])))
        #expect(!list.stdout.contains(String(parts[2])))
        #expect(try work.run("token", "revoke", String(parts[1])).status == 0)
        #expect(try work.run("token", "list", "--format", "json").stdout.contains("revoked_at"))
        let unknown = try work.run("token", "revoke", "000000000000")
        #expect(unknown.status == 2)
        let noApp = try work.run("token", "create", "--scope", "read")
        #expect(noApp.status == 2)
        #expect(noApp.stderr.contains("--app"))
    }
}
