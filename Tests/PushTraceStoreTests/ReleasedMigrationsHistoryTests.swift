import Foundation
import PushTraceTestSupport
import Testing

/// The lists of released migrations only grow: each version git holds of a file that pins one, less what its
/// `withdrawn` list took back, is the start of today's list (docs/schema.md). The check itself is tested on a git
/// repository made for the test.
@Suite("Released migrations: every pinned list only grows")
struct ReleasedMigrationsHistoryTests {
    /// The files that pin each engine's released migrations, from `Tests/`.
    static let pinned = ["PushTraceSQLiteTests/FrozenMigrationsTests.swift", "PushTraceStoreTests/FrozenPostgresMigrationsTests.swift"]

    @Test(
        "every version git holds of the pinned list is the start of today's (needs a full clone)",
        .enabled(if: ReleasedMigrationsHistory.available()), arguments: pinned)
    func pinnedListOnlyGrows(file: String) throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let violations = try ReleasedMigrationsHistory(file: tests.appendingPathComponent(file).path).violations()
        #expect(violations == [], "\(violations.joined(separator: "\n"))")
    }

    @Test(
        "an entry whose digest changed, one removed or reordered fails; one added at the end or withdrawn passes",
        .enabled(if: ReleasedMigrationsHistory.available()))
    func catchesEditsInPlace() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Frozen.swift").path
        try git(["init", "-q"], in: folder.path)
        try commit([("v1-a", "0000000000000001"), ("v2-b", "0000000000000002")], to: file, in: folder.path)
        let history = ReleasedMigrationsHistory(file: file)

        // Kept: one added at the end, committed.
        try commit([("v1-a", "0000000000000001"), ("v2-b", "0000000000000002"), ("v3-c", "0000000000000003")], to: file, in: folder.path)
        #expect(try history.violations() == [])

        // Broken, in the working tree: v2-b's digest changed in place.
        let changed = [("v1-a", "0000000000000001"), ("v2-b", "00000000000000ff"), ("v3-c", "0000000000000003")]
        try write(changed, to: file)
        #expect(try !history.violations().isEmpty)
        // Kept: the first text withdrawn, the new one in its place.
        try write(changed, withdrawn: [("v2-b", "0000000000000002")], to: file)
        #expect(try history.violations() == [])

        // Broken: v2-b removed; then v2-b and v3-c swapped.
        try write([("v1-a", "0000000000000001"), ("v3-c", "0000000000000003")], to: file)
        #expect(try !history.violations().isEmpty)
        try write([("v1-a", "0000000000000001"), ("v3-c", "0000000000000003"), ("v2-b", "0000000000000002")], to: file)
        #expect(try !history.violations().isEmpty)
        // Kept: v2-b removed and withdrawn.
        try write([("v1-a", "0000000000000001"), ("v3-c", "0000000000000003")], withdrawn: [("v2-b", "0000000000000002")], to: file)
        #expect(try history.violations() == [])
    }

    private func write(_ released: [(String, String)], withdrawn: [(String, String)] = [], to file: String) throws {
        func list(_ name: String, _ entries: [(String, String)]) -> String {
            let lines = entries.map { "        (\"\($0.0)\", \"\($0.1)\")," }.joined(separator: "\n")
            return "    static let \(name) = [\n\(lines)\n    ]\n"
        }
        try ("struct Frozen {\n" + list("released", released) + list("withdrawn", withdrawn) + "}\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
    }

    private func commit(_ entries: [(String, String)], to file: String, in folder: String) throws {
        try write(entries, to: file)
        try git(["add", "Frozen.swift"], in: folder)
        try git(["-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "released"], in: folder)
    }

    private func git(_ arguments: [String], in folder: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", folder] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSetupError("git \(arguments) exited with \(process.terminationStatus)") }
    }
}
