import Foundation
import PushTracePostgres
import PushTraceSQLite
import PushTraceStore
import PushTraceTestSupport
import Testing

@Suite("Every engine: an app's dictionaries")
struct DictionaryTrainingInterfaceTests {
    static let app = "net.rorklab.dailypick"

    /// `count` log lines of about 200 bytes from `device`, in one bundle, each holding `marker`.
    static func bundle(device: String, count: Int, marker: String, from n: Int) -> [String] {
        [Lines.manifest(app: app, device: device)]
            + (0..<count).map { i in
                #"{"type":"log","ts":\#(Lines.t0 + Int64(n + i)),"process":"service","level":"info","message":"\#(marker) \#(n + i) \#(String(repeating: "x", count: 120))","notification_id":"n-\#(n + i)"}"#
            }
    }

    static func scalar(_ store: any TraceStore, _ sql: String) throws -> Int64 {
        var value: Int64 = -1
        try store.readOnlyQuery(sql, columns: { _ in }) { row in
            if case .integer(let number) = row.first { value = number }
        }
        return value
    }

    /// SQLite only: megabytes of bundles on PostgreSQL take long enough to starve the suite's live-server tests;
    /// `make attack-test` runs the same through a server on each engine.
    @Test(
        "one device cannot train an app's dictionary; several can; a newer one is trained as the volume grows, and new blocks take it",
        arguments: [TestEngine.sqlite])
    func firstUploaderCannotFixTheDictionary(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        let store = temporary.store
        let dictionaries = "SELECT count(*) FROM dictionary WHERE app_id = '\(Self.app)'"
        let contains =
            engine == .sqlite
            ? "instr(bytes, CAST('EVILMARK' AS BLOB)) > 0" : "position('EVILMARK'::bytea in bytes) > 0"
        let newestIsEvil = "SELECT count(*) FROM dictionary WHERE id = (SELECT max(id) FROM dictionary) AND \(contains)"
        var n = 0
        func upload(_ device: String, lines: Int, marker: String) throws {
            _ = try temporary.ingest(Self.bundle(device: device, count: lines, marker: marker, from: n))
            n += lines
        }
        // The first uploader alone, with far more than a sample's worth of lines: no dictionary.
        for _ in 0..<10 { try upload("evil-1", lines: 100, marker: "EVILMARK") }
        #expect(try Self.scalar(store, dictionaries) == 0)
        // With made-up devices it can have the first one trained from its lines...
        for _ in 0..<2 {
            for device in 2...5 { try upload("evil-\(device)", lines: 120, marker: "EVILMARK") }
        }
        #expect(try Self.scalar(store, dictionaries) == 1)
        #expect(try Self.scalar(store, newestIsEvil) == 1)
        // ...but not for ever: as honest devices send more, a newer one is trained from theirs.
        for round in 0..<12 {
            for device in 1...10 { try upload("honest-\(device)", lines: 90, marker: "honest\(round)") }
        }
        #expect(try Self.scalar(store, dictionaries) == 2)
        #expect(try Self.scalar(store, newestIsEvil) == 0)
        try upload("honest-1", lines: 10, marker: "later")
        #expect(
            try Self.scalar(store, "SELECT dictionary FROM record_block ORDER BY id DESC LIMIT 1")
                == Self.scalar(store, "SELECT max(id) FROM dictionary"))
    }

    @Test(
        "retention empties a superseded dictionary once no block names it, its config bodies compressed again and still read",
        arguments: TestEngine.all)
    func supersededDictionaryGoes(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let store = temporary.store
        let old = Lines.t0 + 4_000, new = old + 10 * 86_400_000
        var n = 0
        func upload(_ device: String, lines: Int, marker: String, at received: Int64 = old) throws {
            _ = try temporary.ingest(Self.bundle(device: device, count: lines, marker: marker, from: n), receivedAt: received)
            n += lines
        }
        for _ in 0..<2 {
            for device in 1...5 { try upload("d-\(device)", lines: 120, marker: "first") }
        }
        #expect(try Self.scalar(store, "SELECT count(*) FROM dictionary") == 1)
        let first = try Self.scalar(store, "SELECT adler32 FROM dictionary")
        // A config record stored now is compressed against the first dictionary; it stays in force.
        let config =
            #"{"type":"config","ts":\#(Lines.t0),"process":"app","app_group":"group.x","categories":[{"id":"DAILY_PICK","actions":["A"]}]}"#
        _ = try temporary.ingest([Lines.manifest(app: Self.app, device: "d-1"), config], receivedAt: old)
        for round in 0..<12 {
            for device in 1...10 { try upload("d-\(device)", lines: 90, marker: "more\(round)") }
        }
        #expect(try Self.scalar(store, "SELECT count(*) FROM dictionary") == 2)
        try upload("d-1", lines: 10, marker: "later", at: new)
        let retention = try store.deleteExpired(before: old + 86_400_000)
        // Superseded a moment ago: kept for the grace, whatever its use.
        #expect(retention.dictionaries == 0)
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 2 * DictionaryRetirement.grace
        #expect(try Self.retire(store, now: later) == 1)
        // Its row stays, emptied: the app's count of dictionaries, which spaces its training, does not go down.
        #expect(try Self.scalar(store, "SELECT count(*) FROM dictionary") == 2)
        #expect(try Self.scalar(store, "SELECT count(*) FROM dictionary WHERE length(bytes) = 0") == 1)
        #expect(try Self.retire(store, now: later) == 0)
        let prefix = DictionaryRetirement.headerPrefix(adler32: first).map { String(format: "%02x", $0) }.joined()
        let literal = engine == .sqlite ? "x'\(prefix)'" : "'\\x\(prefix)'::bytea"
        let substring = engine == .sqlite ? "substr(body, 3, 4)" : "substring(body from 3 for 4)"
        #expect(try Self.scalar(store, "SELECT count(*) FROM config_body WHERE \(substring) = \(literal)") == 0)
        #expect(try await store.latestConfiguration(appID: Self.app)?.registeredCategories == ["DAILY_PICK"])
    }

    @Test(
        "an app whose lines all come from its backend still gets a dictionary", arguments: TestEngine.all)
    func backendOnlyApp(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        var n = 0
        for _ in 0..<8 {
            var lines = [Lines.manifest(app: Self.app, device: nil)]
            for _ in 0..<100 {
                lines += Lines.sent("b-\(n)", at: Lines.t0 + Int64(n))
                n += 1
            }
            _ = try temporary.ingest(lines)
        }
        #expect(try Self.scalar(temporary.store, "SELECT count(*) FROM dictionary WHERE app_id = '\(Self.app)'") == 1)
    }

    /// Retention's last step alone, at a time past the grace.
    private static func retire(_ store: any TraceStore, now: Int64) throws -> Int? {
        if let store = store as? SQLiteStore { return try store.retireDictionaries(now: now) }
        if let store = store as? PostgresStore { return try store.retireDictionaries(now: now) }
        return nil
    }
}
