import Foundation
import GRDB
import PushTraceStore

/// The bodies of config records, each kept once in `config_body`: every bundle of a device repeats its config
/// records, and a `config` row only refers to the body it had.
///
/// A body is found again by the 64-bit FNV-1a digest of its line, and only taken when the stored line is the same,
/// byte for byte (two lines may share a digest). A group commit remembers the bodies it has met, so that a
/// device's repeated config costs a lookup in memory, not a read and a decompression.
final class ConfigBodies {
    private let dictionaries: DictionaryCache
    /// Bodies met by this group: digest → (row id, line, App Group).
    private var known: [Int64: [(id: Int64, line: String, appGroup: String?)]] = [:]

    init(dictionaries: DictionaryCache) {
        self.dictionaries = dictionaries
    }

    /// The row id of the body holding `line` (with its App Group), stored now when there is none.
    func reference(_ line: String, appGroup: String?, dictionary: RecordDictionaries.Current, db: Database) throws -> Int64 {
        let digest = ConfigBodyDigest.of(line)
        if let id = known[digest]?.first(where: { $0.line.utf8.elementsEqual(line.utf8) && $0.appGroup == appGroup })?.id {
            return id
        }
        let candidates = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, app_group, body FROM config_body WHERE digest = ?"),
            arguments: [digest])
        for row in candidates where (row[1] as String?) == appGroup {
            let id: Int64 = row[0]
            // Byte for byte: `==` on strings is canonical equivalence, and the body must be the line as received.
            if try ConfigBody.text(row[2], dictionaries: dictionaries, db: db).utf8.elementsEqual(line.utf8) {
                remember(digest, id, line, appGroup)
                return id
            }
        }
        try db.cachedStatement(sql: "INSERT INTO config_body (digest, app_group, body) VALUES (?, ?, ?)")
            .execute(arguments: [digest, appGroup, Data(ConfigBody.compressed(line, dictionary: dictionary))])
        let id = db.lastInsertedRowID
        remember(digest, id, line, appGroup)
        return id
    }

    /// Forgets every body met: after a bundle's savepoint rolled back, the rows it stored are gone.
    func forget() { known.removeAll() }

    private func remember(_ digest: Int64, _ id: Int64, _ line: String, _ appGroup: String?) {
        // A group of a whole bulk ingest meets every device's config: the memo is bounded, and starts again.
        if known.count >= 50_000 { known.removeAll(keepingCapacity: true) }
        known[digest, default: []].append((id, line, appGroup))
    }
}
