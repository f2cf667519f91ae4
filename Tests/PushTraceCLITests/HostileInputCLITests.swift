import Foundation
import Testing

/// The CLI's side of docs/security.md: stored values from an earlier release, text a device sent, files it leaves.
@Suite("Hostile input, through the CLI")
struct HostileInputCLITests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/unbounded-1.0.0/store.sqlite")
    static let overflowed = "11111111-2222-4333-8444-555555555555"
    static let sentAtInt64Max = "66666666-7777-4888-8999-aaaaaaaaaaaa"

    @Test("a store the previous release wrote with Int64's ends in it opens, and every reading command answers")
    func readsAStoreWithUnboundedValues() throws {
        let work = try WorkFolder()
        try FileManager.default.copyItem(at: Self.fixture, to: work.url.appendingPathComponent("pushtrace.sqlite"))
        let why = try work.run("why", Self.overflowed)
        #expect(why.status == 0, "\(why.stderr)")
        #expect(
            Self.flat(why.stdout).contains("[time out of range: 9223372036854775807, stored unchecked by an earlier release]"),
            "\(why.stdout)")
        #expect(Self.flat(why.stdout).contains("9223372036854775807 ms (out of range)"))
        let json = try work.run("why", Self.sentAtInt64Max, "--format", "json")
        #expect(json.status == 0, "\(json.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let first = try #require((document["timeline"] as? [[String: Any]])?.first)
        #expect((first["ts"] as? NSNumber)?.int64Value == Int64.max)
        #expect(first["out_of_range"] as? [String] == ["ts"])
        for arguments in [
            ["logs", Self.overflowed], ["search"], ["report", "--app", "net.example.overflow", "--week", "2025-W47"],
            ["alerts", "--now", "2025-11-20"], ["sql", "SELECT count(*) FROM record_block"],
        ] {
            let result = try work.run(arguments, environment: [:])
            #expect(result.status == 0, "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(try work.run("logs", Self.overflowed).stdout.hasPrefix("out of range (-9223368477582791514)"))
        // Settling the causes the crash left pending, and a new bundle on top, work too.
        try work.write(
            "more.ndjson",
            [
                #"{"type":"manifest","bundle_id":"b-more","app_id":"net.example.overflow","device_id":"d-1"}"#,
                #"{"type":"event","ts":1763622001000,"process":"app","event":"app.response","notification_id":"\#(Self.overflowed)","action":"x"}"#,
            ])
        let ingest = try work.run("ingest", "more.ndjson")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(try work.run("why", Self.overflowed).status == 0)
    }

    /// Text with its line wrapping undone: words joined by single spaces.
    static func flat(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }

    @Test("ingest of the bundles that killed the previous release: refused or rejected by line, exit 2 or 0")
    func ingestsOverflowingBundles() throws {
        let work = try WorkFolder()
        try work.write(
            "overflow.ndjson",
            [
                #"{"type":"manifest","bundle_id":"b-1","app_id":"net.x","device_id":"d-1","uploaded_at":100000000000}"#,
                #"{"type":"event","ts":9223372036854775807,"process":"service","event":"service.received","notification_id":"n-1"}"#,
            ])
        let refused = try work.run("ingest", "overflow.ndjson")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("uploaded_at"), "\(refused.stderr)")
        try work.write(
            "record.ndjson",
            [
                #"{"type":"manifest","bundle_id":"b-2","app_id":"net.x","device_id":"d-1","uploaded_at":1763622003120}"#,
                #"{"type":"event","ts":9223372036854775807,"process":"service","event":"service.received","notification_id":"n-1"}"#,
            ])
        let stored = try work.run("ingest", "record.ndjson")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout.contains("accepted 0, rejected 1"), "\(stored.stdout)")
    }

    @Test("logs, why, search, sql and token list show what a device sent escaped; JSON and piped CSV stay exact")
    func terminalOutput() throws {
        let work = try WorkFolder()
        let message = "\u{1B}]0;pwned\u{7}\u{1B}[2K\rOVERWRITTEN\nforged"
        let escapedJSON = #"\u001b]0;pwned\u0007\u001b[2K\rOVERWRITTEN\nforged"#
        try work.write(
            "term.ndjson",
            [
                #"{"type":"manifest","bundle_id":"b-1","app_id":"net.x","device_id":"d-1"}"#,
                #"{"type":"event","ts":1763622001000,"process":"service","event":"service.received","notification_id":"n-1","category":"DAILY","note":"\#(escapedJSON)"}"#,
                #"{"type":"log","ts":1763622001001,"process":"service","level":"error\u001b[31m","notification_id":"n-1","message":"\#(escapedJSON)"}"#,
            ])
        #expect(try work.run("ingest", "term.ndjson").status == 0)
        #expect(try work.run("token", "create", "--scope", "metrics", "--label", "prometheus").status == 0)
        let outputs = [
            try work.run("logs", "n-1"), try work.run("why", "n-1"), try work.run("search"),
            try work.run("sql", "SELECT source FROM bundle"), try work.run("token", "list"),
        ]
        for output in outputs {
            #expect(output.status == 0, "\(output.stderr)")
            #expect(!output.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(output.stdout)")
        }
        #expect(outputs[0].stdout.contains(#"\e]0;pwned\u{7}\e[2K\rOVERWRITTEN\nforged"#), "\(outputs[0].stdout)")
        #expect(Self.flat(outputs[1].stdout).contains(#"note=\e]0;pwned\u{7}\e[2K\rOVERWRITTEN\nforged"#), "\(outputs[1].stdout)")
        let exact = try work.run("logs", "n-1", "--format", "json")
        let lines = try #require(try JSONSerialization.jsonObject(with: Data(exact.stdout.utf8)) as? [[String: Any]])
        #expect(lines.first?["message"] as? String == message)
        // The line is stored exactly as received, escapes and all.
        let export = try work.run("export", "--notification", "n-1")
        #expect(export.stdout.contains(escapedJSON), "\(export.stdout)")
        let csv = try work.run("sql", "--format", "csv", "SELECT 'a' || char(27) || '[31m' || char(10) || 'b' AS m")
        #expect(csv.stdout == "m\n\"a\u{1B}[31m\nb\"\n", "\(csv.stdout)")
    }

    @Test("export onto a terminal shows a line's hidden characters escaped; piped, the line is byte for byte")
    func exportOntoATerminal() throws {
        let work = try WorkFolder()
        // Valid JSON may hold C1 controls and bidi overrides raw: they are stored as received.
        let line =
            #"{"type":"event","ts":1763622001000,"process":"service","event":"service.received","notification_id":"n-1","note":"a\#u{9B}2Jb\#u{202E}c"}"#
        try work.write("raw.ndjson", [#"{"type":"manifest","bundle_id":"b-1","app_id":"net.x","device_id":"d-1"}"#, line])
        #expect(try work.run("ingest", "raw.ndjson").status == 0)
        #expect(try work.run("export").stdout == line + "\n")
        // script(1) gives the command a terminal for its standard output.
        let onTerminal = try Executable.run(
            ["-qec", "\(Executable.url.path) export", "/dev/null"], in: work.url, executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(onTerminal.status == 0, "\(onTerminal.stderr)")
        #expect(onTerminal.stdout.contains(#""note":"a\u{9B}2Jb\u{202E}c"}"#), "\(onTerminal.stdout)")
        #expect(!onTerminal.stdout.unicodeScalars.contains { $0 == "\u{9B}" || $0 == "\u{202E}" })
    }

    @Test("token create refuses an app that is no bundle identifier, and a label with control characters")
    func tokenValidation() throws {
        let work = try WorkFolder()
        for arguments in [
            ["--scope", "ingest", "--app", "net.x\n2026 forged"], ["--scope", "ingest", "--app", String(repeating: "a", count: 256)],
            ["--scope", "read", "--app", "net.x", "--label", "a\u{1B}[2Jb"], ["--scope", "metrics", "--app", "net.x"],
        ] {
            let result = try work.run(["token", "create"] + arguments, environment: [:])
            #expect(result.status == 2, "\(arguments)")
            #expect(!result.stderr.contains("\u{1B}"), "\(result.stderr)")
        }
        let metrics = try work.run("token", "create", "--scope", "metrics")
        #expect(metrics.status == 0, "\(metrics.stderr)")
    }

    @Test("serve --no-auth listens on loopback only")
    func noAuthLoopbackOnly() throws {
        let work = try WorkFolder()
        let refused = try work.run("serve", "--no-auth", "--host", "0.0.0.0")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("loopback"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.url.appendingPathComponent("pushtrace.sqlite").path))
    }

    @Test("a new store is 0600, and sql leaves no -wal or -shm behind on a store that had none")
    func storeFiles() throws {
        let work = try WorkFolder()
        try work.write(
            "one.ndjson",
            [
                #"{"type":"manifest","bundle_id":"b-1","app_id":"net.x","device_id":"d-1"}"#,
                #"{"type":"event","ts":1763622001000,"process":"service","event":"service.received","notification_id":"n-1"}"#,
            ])
        #expect(try work.run("ingest", "one.ndjson").status == 0)
        let path = work.url.appendingPathComponent("pushtrace.sqlite").path
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue & 0o777 == 0o600, "\(String(mode.intValue, radix: 8))")
        let before = try FileManager.default.contentsOfDirectory(atPath: work.url.path).sorted()
        #expect(!before.contains("pushtrace.sqlite-wal"), "\(before)")
        #expect(try work.run("sql", "SELECT count(*) FROM record_block").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.url.path).sorted() == before)
    }
}
