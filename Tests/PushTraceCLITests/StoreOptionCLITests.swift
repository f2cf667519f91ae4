import Foundation
import Testing

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
}
