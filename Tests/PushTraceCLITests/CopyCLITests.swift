import Foundation
import PushTracePostgres
import PushTraceTestSupport
import Testing

/// `pushtrace copy` (docs/spec.md §9): a whole store into an empty one, on either engine.
@Suite("CLI: copy")
struct CopyCLITests {
    @Test(
        "copy moves a store to PostgreSQL (when the test cluster runs) and back to a new file: the same answers from each, every table counted alike"
    )
    func copyThereAndBack() throws {
        let work = try WorkFolder()
        #expect(
            try work.run("simulate", "--out", "sim", "--notifications", "120", "--seed", "9", "--end", "2026-11-16T00:00:00Z").status == 0)
        #expect(try work.run("ingest", "sim").status == 0)
        var middle = "middle.sqlite"
        var drop: (() -> Void)?
        if let cluster = TestEngine.postgresCluster {
            let name = "pt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            middle = try PostgresDatabases.create(name, cluster: cluster)
            drop = { try? PostgresDatabases.drop(name, cluster: cluster) }
        }
        defer { drop?() }
        let there = try work.run("copy", "--from", "pushtrace.sqlite", "--to", middle)
        #expect(there.status == 0, "\(there.stderr)")
        #expect(there.stdout.contains("record_block"))
        #expect(there.stdout.contains("the same in both"))
        // The URL's password never reaches the output.
        #expect(!there.stdout.contains(":pushtrace@"))
        let back = try work.run("copy", "--from", middle, "--to", "back.sqlite")
        #expect(back.status == 0, "\(back.stderr)")

        let listed = try work.run("search", "--format", "json", "--limit", "500")
        let ids = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
            .compactMap { $0["notification_id"] as? String }
        #expect(ids.count > 100)
        for id in ids.prefix(20) {
            let answers = try ["pushtrace.sqlite", middle, "back.sqlite"].map { try work.run("why", id, "--db", $0, "--format", "json") }
            #expect(answers.allSatisfy { $0.status == 0 })
            #expect(Set(answers.map(\.stdout)).count == 1, "why \(id)")
        }
        let reports = try ["pushtrace.sqlite", middle, "back.sqlite"].map {
            try work.run("report", "--db", $0, "--week", "2026-W46", "--app", "net.rorklab.dailypick")
        }
        #expect(reports.allSatisfy { $0.status == 0 })
        #expect(Set(reports.map(\.stdout)).count == 1)
        #expect(try work.run("check", "--db", "back.sqlite").status == 0)
    }

    @Test(
        "copy refuses an SQLite target that exists (a file, an empty file, a symbolic link, a companion file), the same store twice, and a source that does not exist, saying why"
    )
    func refusals() throws {
        let work = try WorkFolder()
        #expect(try work.run("simulate", "--out", "sim", "--notifications", "10", "--end", "2026-11-16T00:00:00Z").status == 0)
        #expect(try work.run("ingest", "sim").status == 0)
        #expect(try work.run("ingest", "sim", "--db", "other.sqlite").status == 0)
        let full = try work.run("copy", "--from", "pushtrace.sqlite", "--to", "other.sqlite")
        #expect(full.status == 2 && full.stderr.contains("it exists"), "\(full.stderr)")
        // Made ready by someone else: an empty file, a symbolic link (dangling or to a file), SQLite's companion.
        let manager = FileManager.default
        try Data().write(to: work.url.appendingPathComponent("empty.sqlite"))
        try manager.createSymbolicLink(
            atPath: work.url.appendingPathComponent("dangling.sqlite").path, withDestinationPath: "elsewhere.sqlite")
        try Data("keep".utf8).write(to: work.url.appendingPathComponent("victim"))
        try manager.createSymbolicLink(atPath: work.url.appendingPathComponent("link.sqlite").path, withDestinationPath: "victim")
        try Data().write(to: work.url.appendingPathComponent("fresh.sqlite-wal"))
        for target in ["empty.sqlite", "dangling.sqlite", "link.sqlite", "fresh.sqlite"] {
            let refused = try work.run("copy", "--from", "pushtrace.sqlite", "--to", target)
            #expect(refused.status == 2 && refused.stderr.contains("exists"), "\(target): \(refused.stderr)")
        }
        #expect(!manager.fileExists(atPath: work.url.appendingPathComponent("elsewhere.sqlite").path))
        #expect(try Data(contentsOf: work.url.appendingPathComponent("victim")) == Data("keep".utf8))
        #expect(!manager.fileExists(atPath: work.url.appendingPathComponent("fresh.sqlite").path))
        let same = try work.run("copy", "--from", "pushtrace.sqlite", "--to", "pushtrace.sqlite")
        #expect(same.status == 2 && same.stderr.contains("the same store"))
        let missing = try work.run("copy", "--from", "nothing.sqlite", "--to", "new.sqlite")
        #expect(missing.status == 2 && missing.stderr.contains("no database at nothing.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: work.url.appendingPathComponent("new.sqlite").path))
    }
}
