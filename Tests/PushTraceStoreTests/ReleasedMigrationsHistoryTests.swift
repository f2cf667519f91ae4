import Foundation
import PushTraceTestSupport
import Testing

/// The check that a pinned list of released migrations only grows, run on a git repository made for the test: each
/// way of breaking the rule is caught, and the ways of keeping it pass.
@Suite("Released migrations: the history check catches a list edited in place")
struct ReleasedMigrationsHistoryTests {
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
        #expect(try history.violations(withdrawn: []) == [])

        // Broken, in the working tree: v2-b's digest changed in place.
        try write([("v1-a", "0000000000000001"), ("v2-b", "00000000000000ff"), ("v3-c", "0000000000000003")], to: file)
        #expect(try !history.violations(withdrawn: []).isEmpty)
        // Kept: the first text withdrawn, the new one in its place.
        #expect(try history.violations(withdrawn: [("v2-b", "0000000000000002")]) == [])

        // Broken: v2-b removed; then v2-b and v3-c swapped.
        try write([("v1-a", "0000000000000001"), ("v3-c", "0000000000000003")], to: file)
        #expect(try !history.violations(withdrawn: []).isEmpty)
        try write([("v1-a", "0000000000000001"), ("v3-c", "0000000000000003"), ("v2-b", "0000000000000002")], to: file)
        #expect(try !history.violations(withdrawn: []).isEmpty)
        // Kept: v2-b removed and withdrawn.
        try write([("v1-a", "0000000000000001"), ("v3-c", "0000000000000003")], to: file)
        #expect(try history.violations(withdrawn: [("v2-b", "0000000000000002")]) == [])
    }

    private func write(_ entries: [(String, String)], to file: String) throws {
        let lines = entries.map { "        (\"\($0.0)\", \"\($0.1)\")," }.joined(separator: "\n")
        try "struct Frozen {\n    static let released = [\n\(lines)\n    ]\n}\n".write(toFile: file, atomically: true, encoding: .utf8)
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
