import Foundation
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

    @Test(
        "one device cannot train an app's dictionary; several can; a newer one is trained as the volume grows, and new blocks take it",
        arguments: TestEngine.all)
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
            for device in 1...8 { try upload("honest-\(device)", lines: 90, marker: "honest\(round)") }
        }
        #expect(try Self.scalar(store, dictionaries) == 2)
        #expect(try Self.scalar(store, newestIsEvil) == 0)
        try upload("honest-1", lines: 10, marker: "later")
        #expect(
            try Self.scalar(store, "SELECT dictionary FROM record_block ORDER BY id DESC LIMIT 1")
                == Self.scalar(store, "SELECT max(id) FROM dictionary"))
    }
}
