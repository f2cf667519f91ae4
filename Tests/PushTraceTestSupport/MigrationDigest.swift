import Foundation
import PushTraceStore

/// The digest a released migration's SQL is held to: 64-bit FNV-1a (the store's own line digest), in hex, enough to
/// see that a migration changed.
public enum MigrationDigest {
    public static func of(_ sql: String) -> String {
        let hex = String(UInt64(bitPattern: ConfigBodyDigest.of(sql)), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// What to say when `recorded` and `computed` (migration name → digest, in order) differ.
    public static func difference(recorded: [(String, String)], computed: [(String, String)]) -> String? {
        guard recorded.map(\.0) != computed.map(\.0) || recorded.map(\.1) != computed.map(\.1) else { return nil }
        var lines = [
            "A released migration never changes (docs/schema.md): add a new one instead. A new migration is recorded",
            "here once it is released. Computed now:",
        ]
        for (name, digest) in computed {
            let was = recorded.first { $0.0 == name }?.1
            let mark = was == nil ? "  (new)" : was == digest ? "" : "  (CHANGED from \(was!))"
            lines.append("    (\"\(name)\", \"\(digest)\"),\(mark)")
        }
        for (name, _) in recorded where !computed.contains(where: { $0.0 == name }) {
            lines.append("    \(name): REMOVED")
        }
        return lines.joined(separator: "\n")
    }
}

/// The list of released migrations a test file pins, as git has held it: a list that only grows. Each version of
/// the file in the history, less the entries recorded as withdrawn, must be the start of today's list, and every
/// name and digest the file ever held must still be in it, released or withdrawn. Editing the list in place to let
/// a changed migration pass is then a failing test, not a one-line change.
public struct ReleasedMigrationsHistory {
    /// The file's path, as `#filePath` gives it.
    public var file: String

    public init(file: String = #filePath) {
        self.file = file
    }

    /// Whether the file is in a git work tree with its whole history and git at hand: a full clone is; a shallow
    /// clone, which holds only its last commits, and an exported source tree are not.
    public static func available(file: String = #filePath) -> Bool {
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        return (try? git(["rev-parse", "--is-inside-work-tree", "--is-shallow-repository"], in: folder)) == "true\nfalse\n"
    }

    /// What breaks the rule, one line each; empty when every committed version keeps to it. The file's `withdrawn`
    /// list names the entries taken back.
    public func violations() throws -> [String] {
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        let relative = try Self.git(["ls-files", "--full-name", "--", file], in: folder)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !relative.isEmpty else { return ["\(file) is not committed: its history cannot be read"] }
        let current = try String(contentsOfFile: file, encoding: .utf8)
        let released = Self.entries(in: Self.list("released", in: current))
        let withdrawn = Self.entries(in: Self.list("withdrawn", in: current))
        let kept = Set((released + withdrawn).map { "\($0.0) \($0.1)" })
        // Pathspecs are read from the folder git runs in; `:(top)` reads this one from the top of the work tree.
        let commits = try Self.git(["log", "--format=%H", "--", ":(top)" + relative], in: folder)
            .split(separator: "\n")
        var problems: [String] = []
        for commit in commits {
            let text = try Self.git(["show", "\(commit):\(relative)"], in: folder)
            let short = commit.prefix(7)
            for (name, digest) in Self.entries(in: text) where !kept.contains("\(name) \(digest)") {
                problems.append("\(short) recorded \(name) as \(digest): it is neither released nor withdrawn now")
            }
            // A withdrawn text of a migration still released under its name was superseded in place: it holds
            // that name's place. A withdrawn name leaves the list.
            let then = Self.entries(in: Self.list("released", in: text)).compactMap { entry -> (String, String)? in
                guard withdrawn.contains(where: { $0.0 == entry.0 && $0.1 == entry.1 }) else { return entry }
                return released.first { $0.0 == entry.0 }
            }
            let start = Array(released.prefix(then.count))
            if start.map(\.0) != then.map(\.0) || start.map(\.1) != then.map(\.1) {
                problems.append("\(short)'s released list is not the start of today's: \(then.map(\.0))")
            }
        }
        if commits.isEmpty { problems.append("git holds no version of \(relative)") }
        return problems
    }

    /// The text of the list `name` (`released`, `withdrawn`): from its declaration to the line that closes it.
    static func list(_ name: String, in text: String) -> String {
        guard let start = text.range(of: "static let \(name)") else { return "" }
        let rest = text[start.upperBound...]
        let end = rest.range(of: "\n    ]")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    /// Every `("name", "digest")` pair in `text`, in order.
    static func entries(in text: String) -> [(String, String)] {
        text.matches(of: #/\("([^"\n]+)", "([0-9a-f]{16})"\)/#).map { (String($0.output.1), String($0.output.2)) }
    }

    private static func git(_ arguments: [String], in folder: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", folder] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSetupError("git \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
