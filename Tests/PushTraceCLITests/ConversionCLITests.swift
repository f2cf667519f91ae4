import Foundation
import Testing

/// A store written by the release before record blocks (a row per record), converted on open by this one.
@Suite("Converting a store the previous release wrote")
struct ConversionCLITests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/blocks-conversion")

    /// A report's JSON without the `audience` figures, which releases before them did not print.
    static func withoutAudience(_ json: String) throws -> NSDictionary {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        object["audience"] = nil
        if var previous = object["previous"] as? [String: Any] {
            previous["audience"] = nil
            object["previous"] = previous
        }
        return object as NSDictionary
    }

    static func answer(_ name: String) throws -> String {
        try String(contentsOf: fixture.appendingPathComponent("answers/\(name)"), encoding: .utf8)
    }

    @Test("converted on first open, with progress; why, logs, search, the report and the alerts answer exactly as that release did")
    func answersUnchanged() throws {
        let work = try WorkFolder()
        try FileManager.default.copyItem(
            at: Self.fixture.appendingPathComponent("store.sqlite"),
            to: work.url.appendingPathComponent("pushtrace.sqlite"))
        let app = try Self.answer("app.txt").trimmingCharacters(in: .whitespacesAndNewlines)
        let records = try #require(Int(try Self.answer("records.txt").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(records > 1_000)

        let search = try work.run("search", "--app", app, "--format", "json", "--limit", "1000")
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.stderr.contains("pushtrace: converting pushtrace.sqlite to record blocks: 0 of "))
        #expect(search.stderr.contains("records moved"))
        #expect(search.stdout == (try Self.answer("search.json")))

        // Converted once: the next command has nothing to convert, and the per-record table is gone.
        let tables = try work.run("sql", "--format", "csv", "SELECT count(*) AS n FROM sqlite_master WHERE name = 'record'")
        #expect(tables.stdout == "n\n0\n" && !tables.stderr.contains("converting"))
        let moved = try work.run("sql", "--format", "csv", "SELECT sum(lines) AS n FROM record_block")
        #expect(moved.stdout == "n\n\(records)\n")

        let ids = try Self.answer("notifications.txt").split(separator: "\n").map(String.init)
        #expect(ids.count >= 10)
        for id in ids {
            #expect(try work.run("why", "--app", app, "--format", "json", id).stdout == (try Self.answer("why-\(id).json")), "why \(id)")
            #expect(try work.run("logs", "--app", app, "--format", "json", id).stdout == (try Self.answer("logs-\(id).json")), "logs \(id)")
        }
        // The report as that release printed it; this one adds the audience (docs/protocol.md#reports-the-audience).
        let report = try work.run("report", "--app", app, "--week", "2026-W46", "--format", "json").stdout
        #expect(try Self.withoutAudience(report) == (try Self.withoutAudience(try Self.answer("report.json"))))
        #expect(report.contains(#""audience" : {"#))
        #expect(try work.run("alerts", "--now", "2026-11-12T15:00:00Z", "--format", "json").stdout == (try Self.answer("alerts.json")))
    }
}
