import Foundation
import PushTraceCore
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
        for arguments in [["why", CLITests.id], ["why", CLITests.id, "--format", "json"], ["why", "unknown-id"],
                          ["search"], ["search", "--cause", "service_timeout", "--format", "json"]] {
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
}
