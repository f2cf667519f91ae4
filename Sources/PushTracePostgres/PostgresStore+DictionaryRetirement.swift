import NIOCore
import PostgresNIO
import PushTraceStore

extension PostgresStore {
    /// Empties each dictionary ``DictionaryRetirement`` finds superseded at `now` once no block names it, its config
    /// bodies compressed again on their own first, one dictionary to a transaction; returns how many it emptied.
    ///
    /// Every server takes an app's newest dictionary for new blocks at its next group (``BlockDictionaries``), and
    /// a dictionary is weighed only once a newer one is ``DictionaryRetirement/grace`` old: no server still writes
    /// against it then. Its row is locked first, and the bodies that name it are locked (`FOR UPDATE`) against an
    /// ingest taking one up (`FOR KEY SHARE`) while they are rewritten.
    package func retireDictionaries(now: Int64) throws -> Int {
        let rows = try withSession { session in
            try session.query("SELECT id, app_id, adler32, trained_at, length(bytes) > 0 FROM dictionary").map {
                try $0.decode((Int64, String?, Int64, Int64, Bool).self)
            }
        }
        let whole = Set(rows.filter(\.4).map(\.0))
        let candidates = rows.map { DictionaryRetirement.Candidate(id: $0.0, appID: $0.1, adler32: $0.2, trainedAt: $0.3) }
        var emptied = 0
        for dictionary in DictionaryRetirement.superseded(candidates, now: now) where whole.contains(dictionary.id) {
            let retired = try writing { session -> Bool in
                _ = try session.query("SELECT 1 FROM dictionary WHERE id = \(dictionary.id) FOR UPDATE")
                // Blocks are never rewritten: once none names the dictionary, none will (the grace has passed).
                let used = try session.query(
                    "SELECT EXISTS (SELECT 1 FROM record_block WHERE dictionary = \(dictionary.id))"
                ).first(where: { _ in true })!.decode(Bool.self)
                guard !used else { return false }
                let prefix = ByteBuffer(bytes: DictionaryRetirement.headerPrefix(adler32: dictionary.adler32))
                for row in try session.query(
                    "SELECT id, body FROM config_body WHERE substring(body from 3 for 4) = \(prefix) FOR UPDATE")
                {
                    let (id, body) = try row.decode((Int64, ByteBuffer).self)
                    let alone = try ConfigBody.recompressedAlone(Array(body.readableBytesView)) {
                        self.dictionaries.lookup($0, session)
                    }
                    try session.query("UPDATE config_body SET body = \(ByteBuffer(bytes: alone)) WHERE id = \(id)")
                }
                try session.query("UPDATE dictionary SET bytes = ''::bytea WHERE id = \(dictionary.id)")
                return true
            }
            if retired { emptied += 1 }
        }
        return emptied
    }
}
