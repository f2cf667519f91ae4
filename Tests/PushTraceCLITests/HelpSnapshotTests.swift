import Foundation
import Testing

/// Every command's `--help`, compared with the text kept in `Fixtures/help`, so that help changes only on purpose.
/// After changing a command's help, record the new texts with `PUSHTRACE_RECORD_HELP=1 swift test --filter
/// HelpSnapshotTests` and read the diff.
@Suite("CLI: --help snapshots")
struct HelpSnapshotTests {
    static let commands = [
        "", "ingest", "why", "search", "logs", "report", "alerts", "sql", "simulate", "serve", "token", "token create",
        "token list", "token revoke", "send-event", "lint", "vacuum", "export", "check", "copy",
    ]

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/help")

    @Test("each command's --help is the recorded text", arguments: commands)
    func helpMatchesSnapshot(command: String) throws {
        let work = try WorkFolder()
        // A fixed width, and no PUSHTRACE_DB (its value would show as --db's default).
        let output = try work.run(
            command.split(separator: " ").map(String.init) + ["--help"],
            environment: ["COLUMNS": "100", "PUSHTRACE_DB": ""])
        #expect(output.status == 0)
        let file = Self.folder.appendingPathComponent(
            (command.isEmpty ? "pushtrace" : command.replacingOccurrences(of: " ", with: "-")) + ".txt")
        if ProcessInfo.processInfo.environment["PUSHTRACE_RECORD_HELP"] == "1" {
            try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
            try Data(output.stdout.utf8).write(to: file)
            return
        }
        let recorded = try String(contentsOf: file, encoding: .utf8)
        #expect(output.stdout == recorded, "pushtrace \(command) --help changed: record it again if that was meant (see HelpSnapshotTests)")
    }
}
