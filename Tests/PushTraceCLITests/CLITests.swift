import Foundation
import GRDB
import PushTraceCore
import PushTraceGzip
import Testing

@Suite("The pushtrace executable")
struct CLITests {
    static let id = "6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10"
    static let server = [
        #"{"type":"manifest","bundle_id":"s-1","app_id":"net.rorklab.dailypick","device_id":"server"}"#,
        #"{"type":"event","ts":1763622000000,"process":"server","event":"push.sent","notification_id":"6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10","category":"DAILY_PICK","mutable_content":true,"has_alert":true,"payload_bytes":812,"device_id":"d-7c1e0b"}"#,
        #"{"type":"event","ts":1763622000150,"process":"server","event":"push.apns_response","notification_id":"6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10","status":200}"#,
    ]
    static let device = [
        #"{"type":"manifest","bundle_id":"b-1","app_id":"net.rorklab.dailypick","device_id":"d-7c1e0b"}"#,
        #"{"type":"event","ts":1763622000900,"process":"service","event":"service.received","notification_id":"\#(id)"}"#,
        #"{"type":"event","ts":1763622028900,"process":"service","event":"service.download","notification_id":"\#(id)","url_host":"img.dailypick.net","duration_ms":28000,"http_status":200}"#,
        #"{"type":"event","ts":1763622030800,"process":"service","event":"service.expired","notification_id":"\#(id)","elapsed_ms":29900}"#,
    ]

    @Test("ingest then why --format json: the cause, findings and timeline of docs/spec.md §7")
    func whyJSON() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        try work.write("device.ndjson.gz", bytes: Deflater.gzip(Array(Self.device.map { $0 + "\n" }.joined().utf8)))
        let ingest = try work.run("ingest", "server.ndjson", "device.ndjson.gz")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.contains("device.ndjson.gz: accepted 3, rejected 0"))

        let why = try work.run("why", Self.id, "--format", "json")
        #expect(why.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(why.stdout.utf8)) as? [String: Any])
        #expect(json["cause"] as? String == "service_timeout")
        #expect(json["app_id"] as? String == "net.rorklab.dailypick")
        #expect(json["notification_id"] as? String == Self.id.lowercased())
        let findings = try #require(json["findings"] as? [[String: Any]])
        #expect(findings.first?["code"] as? String == "service_timeout")
        #expect((findings.first?["message"] as? String)?.contains("28.0 s download") == true)
        #expect((findings.first?["evidence"] as? [Any])?.isEmpty == false)
        #expect(findings.first?["fix"] is String)
        let timeline = try #require(json["timeline"] as? [[String: Any]])
        #expect(
            timeline.map { $0["event"] as? String } == [
                "push.sent", "push.apns_response", "service.received",
                "service.download", "service.expired",
            ])
        #expect(timeline.first?["ts"] as? Int == 1_763_622_000_000)

        let text = try work.run("why", Self.id.lowercased())
        #expect(text.stdout.hasPrefix("\(Self.id.lowercased())  (net.rorklab.dailypick)\ncause: service_timeout\n"))
        #expect(text.stdout.contains("+30.800s  service service.expired"), "\(text.stdout)")
    }

    @Test("ingest FOLDER: every bundle file under it, in path order; a folder with none is refused")
    func ingestFolder() throws {
        let work = try WorkFolder()
        try FileManager.default.createDirectory(
            at: work.url.appendingPathComponent("in/device/later"),
            withIntermediateDirectories: true)
        try work.write("in/server.ndjson", Self.server)
        try work.write(
            "in/device/later/device.ndjson.gz",
            bytes: Deflater.gzip(Array(Self.device.map { $0 + "\n" }.joined().utf8)))
        try work.write("in/device/notes.txt", ["not a bundle"])
        let ingest = try work.run("ingest", "--format", "json", "in/")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ingest.stdout.utf8)) as? [String: Any])
        let files = try #require(json["files"] as? [[String: Any]]).map { $0["file"] as? String }
        #expect(files == ["in/device/later/device.ndjson.gz", "in/server.ndjson"])

        try FileManager.default.createDirectory(at: work.url.appendingPathComponent("empty"), withIntermediateDirectories: true)
        let empty = try work.run("ingest", "empty")
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("empty: no bundle files"), "\(empty.stderr)")
    }

    @Test("ingest --quiet --format json lists only the files with rejected lines or refused, and every total")
    func ingestQuietJSON() throws {
        let work = try WorkFolder()
        try FileManager.default.createDirectory(at: work.url.appendingPathComponent("in"), withIntermediateDirectories: true)
        try work.write("in/a-server.ndjson", Self.server)
        try work.write("in/b-device.ndjson", Self.device + ["not json"])
        try work.write(
            "in/c-truncated.ndjson.gz", bytes: Array(Deflater.gzip(Array(Self.device.joined(separator: "\n").utf8)).dropLast(12)))
        let ingest = try work.run("ingest", "--quiet", "--format", "json", "in")
        #expect(ingest.status == 2, "\(ingest.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ingest.stdout.utf8)) as? [String: Any])
        let files = try #require(json["files"] as? [[String: Any]])
        #expect(files.map { $0["file"] as? String } == ["in/b-device.ndjson", "in/c-truncated.ndjson.gz"])
        #expect(files.first?["rejected"] as? Int == 1)
        #expect(files.last?["error"] is String)
        #expect(json["accepted"] as? Int == 5)
        #expect(json["rejected"] as? Int == 1)
        #expect(json["refused"] as? Int == 1)
    }

    @Test("ingest into a store another process keeps locked: exit 2, the reason said, and a whole JSON document")
    func ingestLocked() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        try work.write("device.ndjson", Self.device)
        #expect(try work.run("ingest", "server.ndjson").status == 0)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(
            path: work.url.appendingPathComponent("pushtrace.sqlite").path,
            configuration: configuration)
        // A commit first, so that the log is not empty and opening the store needs no write; then the lock.
        try holder.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = 1; BEGIN IMMEDIATE") }
        defer { try? holder.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") } }

        let ingest = try work.run("ingest", "--format", "json", "device.ndjson")  // waits out the busy timeout, 10 s
        #expect(ingest.status == 2)
        #expect(ingest.stderr.contains("pushtrace: pushtrace.sqlite is locked: another process"), "\(ingest.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ingest.stdout.utf8)) as? [String: Any])
        #expect((json["error"] as? String)?.hasPrefix("pushtrace.sqlite is locked") == true)
        #expect(json["accepted"] as? Int == 0)
        #expect((json["files"] as? [Any])?.isEmpty == true)

        let text = try work.run("ingest", "--quiet", "device.ndjson")
        #expect(text.status == 2)
        #expect(
            text.stdout == "stopped after 0 of 1 files: 0 records accepted, 0 rejected, 0 duplicate bundles, 0 refused; "
                + "those stay stored, the other files were not\n")
    }

    @Test("an unknown ID answers unknown_notification and exits 1")
    func unknownID() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        _ = try work.run("ingest", "server.ndjson")
        let why = try work.run("why", "no-such-id", "--format", "json")
        #expect(why.status == 1)
        #expect(why.stdout.contains("\"cause\" : \"unknown_notification\""))
    }

    @Test("an ID stored for two apps, without --app, exits 2 listing them")
    func ambiguousID() throws {
        let work = try WorkFolder()
        try work.write("a.ndjson", Self.server)
        try work.write("b.ndjson", Self.server.map { $0.replacingOccurrences(of: "net.rorklab.dailypick", with: "com.other.app") })
        _ = try work.run("ingest", "a.ndjson", "b.ndjson")
        let why = try work.run("why", Self.id)
        #expect(why.status == 2)
        #expect(why.stderr.contains("com.other.app, net.rorklab.dailypick"))
        #expect(try work.run("why", Self.id, "--app", "com.other.app").status == 0)
    }

    @Test("a refused file names the file and line, stores nothing, and exits 2")
    func refusedFile() throws {
        let work = try WorkFolder()
        try work.write("good.ndjson", Self.server)
        try work.write("bad.ndjson", Array(Self.device.dropFirst()))
        let result = try work.run("ingest", "good.ndjson", "bad.ndjson")
        #expect(result.status == 2)
        #expect(result.stderr.contains("bad.ndjson:1: refused, nothing stored: expected the manifest"))
        let count = try work.run("sql", "--format", "csv", "SELECT sum(accepted) AS records FROM bundle")
        #expect(count.stdout == "records\n2\n")
    }

    @Test("a rejected line is named with its file and line, the rest stored, exit 0")
    func rejectedLine() throws {
        let work = try WorkFolder()
        try work.write(
            "d.ndjson",
            Self.device + [#"{"type":"event","ts":1763622001,"process":"app","event":"app.response","notification_id":"x","action":"a"}"#])
        let result = try work.run("ingest", "d.ndjson")
        #expect(result.status == 0)
        #expect(result.stdout.contains("d.ndjson:5: rejected: `ts` 1763622001 looks like seconds"))
    }

    @Test("sql --format json and csv: every row, a repeated column name kept apart, an empty answer, quoted fields")
    func sqlFormats() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        _ = try work.run("ingest", "server.ndjson")
        let json = try work.run(
            "sql", "--format", "json",
            """
            SELECT b.app_id, n.app_id, e.column1 AS event, NULL AS none FROM bundle b JOIN notification n USING (app_id)
            JOIN (VALUES ('push.sent'), ('push.apns_response')) e ORDER BY e.column1 DESC
            """)
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["event"] as? String } == ["push.sent", "push.apns_response"])
        #expect(rows.first?["app_id"] as? String == "net.rorklab.dailypick")
        #expect(rows.first?["app_id:2"] as? String == "net.rorklab.dailypick")
        #expect(rows.first?["none"] is NSNull)
        #expect(try work.run("sql", "--format", "json", "SELECT 1 WHERE 0").stdout == "[]\n")
        let csv = try work.run(
            "sql", "--format", "csv",
            "SELECT column1 AS event, 'a,\"b\"' AS quoted, 'x' || char(13) || 'y' AS cr "
                + "FROM (VALUES ('push.sent'), ('push.apns_response'))")
        #expect(csv.stdout == "event,quoted,cr\npush.sent,\"a,\"\"b\"\"\",\"x\ry\"\npush.apns_response,\"a,\"\"b\"\"\",\"x\ry\"\n")
    }

    @Test("sql is read-only, and search, logs and simulate answer")
    func otherCommands() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        try work.write("device.ndjson", Self.device)
        _ = try work.run("ingest", "server.ndjson", "device.ndjson")
        let write = try work.run("sql", "DELETE FROM record_block")
        #expect(write.status == 2)
        #expect(write.stderr.contains("read-only"))
        let search = try work.run("search", "--cause", "service_timeout")
        #expect(search.stdout.contains("6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"))
        #expect(try work.run("search", "--cause", "nope").status == 2)
        #expect(try work.run("logs", Self.id).status == 0)
        let simulate = try work.run("simulate", "--out", "sim", "--notifications", "40", "--end", "2026-11-16T00:00:00Z")
        #expect(simulate.status == 0)
        #expect(FileManager.default.fileExists(atPath: work.url.appendingPathComponent("sim/scenarios.json").path))
        // Each bundle file's modification time is when it was "received": within the 14 simulated days.
        let folder = work.url.appendingPathComponent("sim/io.acme.fitlog")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!files.isEmpty)
        for file in files {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(file).path)
            let received = try #require(attributes[.modificationDate] as? Date).timeIntervalSince1970
            #expect((1_793_577_600...1_794_787_200 + 1).contains(received), "\(file) received at \(received)")
        }
        // An incident must fall within the simulated period, and the error says which period that is.
        let late = try work.run("simulate", "--out", "late", "--incident", "2026-11-15T22:00:00Z")
        #expect(late.status == 2)
        #expect(
            late.stderr.contains(
                #"--incident "2026-11-15T22:00:00Z": must fall within the simulated period, from "#
                    + "2026-11-02 00:00:00 UTC to 3 hours before its end (2026-11-16 00:00:00 UTC)"))
        let vague = try work.run("simulate", "--out", "late", "--incident", "yesterday")
        #expect(vague.status == 2)
        #expect(vague.stderr.contains(#"--incident "yesterday" is not a date"#))
        #expect(!FileManager.default.fileExists(atPath: work.url.appendingPathComponent("late").path))
    }

    @Test("vacuum --retention deletes what is older, then gives the space back in place; --rebuild rebuilds the file")
    func vacuum() throws {
        let work = try WorkFolder()
        #expect(try work.run("simulate", "--out", "sim", "--notifications", "300", "--end", "2026-11-16T00:00:00Z").status == 0)
        #expect(try work.run("ingest", "--quiet", "sim").status == 0)
        let database = work.url.appendingPathComponent("pushtrace.sqlite").path
        func size() throws -> Int64 {
            try #require(try FileManager.default.attributesOfItem(atPath: database)[.size] as? NSNumber).int64Value
        }
        let before = try size()
        let records = try work.run("sql", "--format", "csv", "SELECT coalesce(sum(lines), 0) AS records FROM record_block").stdout
        #expect(records != "records\n0\n")

        // Flags that contradict each other, or name nothing to delete, are refused before anything runs.
        let contradiction = try work.run("vacuum", "--rebuild", "--delete-only", "--retention", "1")
        #expect(contradiction.status == 2)
        #expect(contradiction.stderr.contains("--rebuild and --delete-only contradict each other: choose one"))
        let nothingToDelete = try work.run("vacuum", "--delete-only")
        #expect(nothingToDelete.status == 2)
        #expect(nothingToDelete.stderr.contains("--delete-only deletes what --retention DAYS names: give both"))
        #expect(try work.run("sql", "--format", "csv", "SELECT coalesce(sum(lines), 0) AS records FROM record_block").stdout == records)
        #expect(try size() == before)

        // Every bundle was received in the simulated fortnight, more than a day ago.
        let vacuum = try work.run("vacuum", "--retention", "1")
        #expect(vacuum.status == 0, "\(vacuum.stderr)")
        #expect(vacuum.stdout.contains("deleted in "))
        #expect(vacuum.stdout.contains(" records of "))
        #expect(vacuum.stdout.contains("gave space back in place in "))
        #expect(vacuum.stdout.hasSuffix(", log 0.0 MB\n"))
        let after = try size()
        #expect(after < before * 3 / 4, "\(after) of \(before)")
        #expect(
            try work.run("sql", "--format", "csv", "SELECT coalesce(sum(lines), 0) AS records FROM record_block").stdout == "records\n0\n")

        let rebuild = try work.run("vacuum", "--rebuild")
        #expect(rebuild.status == 0, "\(rebuild.stderr)")
        #expect(rebuild.stderr.contains("rebuilding pushtrace.sqlite: "))
        #expect(rebuild.stderr.contains(" MB in use, copied through "))
        #expect(rebuild.stdout.contains("rebuilt pushtrace.sqlite in "))
        #expect(rebuild.stdout.hasSuffix(", log 0.0 MB\n"))
    }

    @Test("--version names the release, the bundle format and the store schema")
    func version() throws {
        let work = try WorkFolder()
        let version = try work.run("--version")
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("pushtrace 1.0.0 (bundle schema 1, store schema v"), "\(version.stdout)")
    }

    @Test("reading a database that does not exist is a clear error")
    func missingDatabase() throws {
        let work = try WorkFolder()
        let why = try work.run("why", "--db", "nowhere.sqlite", "x")
        #expect(why.status == 2)
        #expect(why.stderr.contains("no database at nowhere.sqlite"))
        // A URL of a scheme no engine reads is refused, not taken for a file name.
        let mysql = try work.run("ingest", "--db", "mysql://db.example/pushtrace", "nothing.ndjson")
        #expect(mysql.status == 2)
        #expect(mysql.stderr.contains("--db names a mysql:// URL, which no store engine reads"), "\(mysql.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.url.path).isEmpty)
    }

    @Test("search --app of which nothing is stored (a misspelt bundle ID) is exit 2 listing the apps")
    func searchUnknownApp() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        #expect(try work.run("ingest", "server.ndjson").status == 0)
        let misspelt = try work.run("search", "--app", "net.rorklab.dailypik")
        #expect(misspelt.status == 2)
        #expect(
            misspelt.stderr == "pushtrace: no notifications of app net.rorklab.dailypik are stored; apps: "
                + "net.rorklab.dailypick (in pushtrace.sqlite)\n")
        let nothingMatches = try work.run("search", "--app", "net.rorklab.dailypick", "--cause", "content_crashed")
        #expect(nothingMatches.status == 0)
        #expect(nothingMatches.stdout.hasSuffix("0 notifications\n"))
    }

    @Test("--db naming a bundle instead of the database is a clear error, for every command that opens it")
    func notADatabase() throws {
        let work = try WorkFolder()
        try work.write("server.ndjson", Self.server)
        for arguments in [["why", "x"], ["ingest", "server.ndjson"], ["sql", "SELECT 1"], ["token", "list"]] {
            let run = try work.run(arguments + ["--db", "server.ndjson"], environment: [:])
            #expect(run.status == 2, "\(arguments)")
            #expect(
                run.stderr == "pushtrace: server.ndjson is not a pushtrace database (not an SQLite file): --db names "
                    + "the file pushtrace ingest wrote\n", "\(arguments)")
        }
    }
}
