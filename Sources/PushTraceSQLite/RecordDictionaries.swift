import Foundation
import GRDB
import PushTraceGzip
import PushTraceRecords
import PushTraceStore

/// The preset dictionaries record blocks are compressed against, kept in the store's `dictionary` table.
///
/// Each app gets its own: apps differ in categories, URLs, messages and config, and a dictionary trained on one
/// app's lines helps another's little. An app's first blocks are deflated with the store's shared dictionary
/// when it has one (stores written before dictionaries were per app) or on their own; once the app holds
/// ``trainingBytes`` of lines, a dictionary is trained from them (typical lines of every record shape it has) and
/// every later block of the app uses it. A dictionary is never changed or deleted once stored, since blocks name it
/// (by its Adler-32, in their zlib header); a later version may train a newer one, and old blocks still read.
enum RecordDictionaries {
    /// The dictionary new blocks are compressed against.
    typealias Current = BlockDictionary

    /// Lines of an app after which its dictionary is trained.
    static let trainingBytes = DictionaryTraining.trainingBytes

    /// The newest dictionary of `appID`, else the newest shared one, else none.
    static func newest(_ db: Database, appID: String) throws -> Current {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT id, app_id, bytes FROM dictionary WHERE app_id = ? OR app_id IS NULL
                        ORDER BY app_id IS NULL, id DESC LIMIT 1
                        """), arguments: [appID])
        else { return .none }
        return Current(id: row[0], appID: row[1], bytes: [UInt8](row[2] as Data))
    }

    /// What training an app's dictionary did.
    enum Training {
        /// The app has fewer than ``trainingBytes`` of lines.
        case notYet
        case trained(Current)
        /// Another dictionary has the same Adler-32 (blocks name theirs by it): the app goes on with what it had.
        case clash
    }

    /// Trains and stores `appID`'s dictionary from its stored lines once it has ``trainingBytes`` of them. Its
    /// blocks are found through its bundles (in the order of their IDs, random ones: a sample across the app's
    /// devices), whatever they were compressed against.
    static func train(_ db: Database, appID: String, dictionaries: DictionaryCache) throws -> Training {
        var blocks: [(lines: Int, rawBytes: Int, data: [UInt8])] = []
        var stored = 0
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT r.lines, r.raw_bytes, r.data FROM bundle b JOIN record_block r ON r.id BETWEEN b.first_block AND b.last_block
                    WHERE b.app_id = ?
                    """), arguments: [appID])
        while stored < trainingBytes, let row = try rows.next() {
            blocks.append((row[0], row[1], [UInt8](row[2] as Data)))
            stored += row[1] as Int
        }
        guard stored >= trainingBytes else { return .notYet }
        var lines: [String] = []
        for block in blocks {
            // A damaged block is left out of the sample: training never stops an ingest.
            lines +=
                (try? RecordBlock.decode(block.data, lines: block.lines, rawBytes: block.rawBytes) {
                    dictionaries.lookup($0, in: db)
                }) ?? []
        }
        let bytes = DictionaryTraining.dictionary(from: lines)
        guard !bytes.isEmpty else { return .notYet }
        let identifier = Int64(DictionaryDeflate.identifier(of: bytes))
        try db.execute(
            sql: "INSERT OR IGNORE INTO dictionary (adler32, trained_at, bytes, app_id) VALUES (?, ?, ?, ?)",
            arguments: [identifier, Int64(Date().timeIntervalSince1970 * 1000), Data(bytes), appID])
        return db.changesCount == 1 ? .trained(Current(id: db.lastInsertedRowID, appID: appID, bytes: bytes)) : .clash
    }
}

/// What each app's blocks are compressed against, with primed deflaters, kept between transactions (one writer
/// at a time); emptied when a dictionary appears that this process did not train (another process's).
final class CurrentDictionaries: @unchecked Sendable {
    private let lock = NSLock()
    private var newestID: Int64 = -1
    private var byApp: [String: RecordDictionaries.Current] = [:]
    /// Apps whose dictionary could not be stored (a shared Adler-32): not trained again by this process.
    private var settled: Set<String> = []
    /// Per app without its own dictionary: bytes of lines stored since its training was last found not due (nil:
    /// not looked at yet by this process). Training is looked at again only once another ``RecordDictionaries/
    /// trainingBytes`` were stored, so a stream of small or empty bundles costs no scan of the app's bundles each.
    private var sinceLastLook: [String: Int] = [:]

    /// The transaction's view: checks once that no other process has added a dictionary since.
    func inTransaction(_ db: Database, dictionaries: DictionaryCache) throws -> AppDictionaries {
        let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(id), 0) FROM dictionary")) ?? 0
        lock.withLock {
            if newest != newestID {
                byApp.removeAll()
                newestID = newest
            }
        }
        return AppDictionaries(db: db, shared: self, dictionaries: dictionaries)
    }

    fileprivate func get(_ appID: String) -> RecordDictionaries.Current? { lock.withLock { byApp[appID] } }

    fileprivate func set(_ appID: String, _ current: RecordDictionaries.Current, trained: Bool) {
        lock.withLock {
            byApp[appID] = current
            if trained { newestID = max(newestID, current.id) }
        }
    }

    /// Forgets what a failed transaction may have trained: the next one reads the table again.
    func forget() {
        lock.withLock {
            byApp.removeAll()
            newestID = -1
        }
    }

    /// Whether `appID`'s training is worth looking at, with `added` bytes of lines just stored.
    fileprivate func isDue(_ appID: String, added: Int) -> Bool {
        lock.withLock {
            guard let seen = sinceLastLook[appID] else { return true }
            sinceLastLook[appID] = seen + added
            return seen + added >= RecordDictionaries.trainingBytes
        }
    }

    fileprivate func looked(_ appID: String) { lock.withLock { sinceLastLook[appID] = 0 } }

    fileprivate func isSettled(_ appID: String) -> Bool { lock.withLock { settled.contains(appID) } }
    fileprivate func settle(_ appID: String) { _ = lock.withLock { settled.insert(appID) } }
}

/// The dictionaries of one write transaction, per app (``CurrentDictionaries/inTransaction(_:dictionaries:)``).
struct AppDictionaries {
    let db: Database
    let shared: CurrentDictionaries
    let dictionaries: DictionaryCache

    /// What `appID`'s new blocks are compressed against.
    func current(for appID: String) throws -> RecordDictionaries.Current {
        if let cached = shared.get(appID) { return cached }
        let current = try RecordDictionaries.newest(db, appID: appID)
        shared.set(appID, current, trained: false)
        return current
    }

    /// Trains `appID`'s dictionary when it has none of its own and enough lines; call after a bundle that stored
    /// `added` bytes of lines.
    func trainIfDue(appID: String, added: Int) throws {
        guard try current(for: appID).appID != appID, !shared.isSettled(appID), shared.isDue(appID, added: added) else { return }
        switch try RecordDictionaries.train(db, appID: appID, dictionaries: dictionaries) {
        case .notYet: shared.looked(appID)
        case .trained(let trained): shared.set(appID, trained, trained: true)
        case .clash: shared.settle(appID)
        }
    }
}

/// Dictionaries read back by their Adler-32, shared by the store's connections: they never change once stored.
final class DictionaryCache: @unchecked Sendable {
    private let lock = NSLock()
    private var byIdentifier: [UInt32: [UInt8]] = [:]

    /// The dictionary a block's header names, read from `db` the first time.
    func lookup(_ identifier: UInt32, in db: Database) -> [UInt8]? {
        if let bytes = lock.withLock({ byIdentifier[identifier] }) { return bytes }
        guard
            let data = try? Data.fetchOne(
                db.cachedStatement(sql: "SELECT bytes FROM dictionary WHERE adler32 = ?"),
                arguments: [Int64(identifier)])
        else { return nil }
        let bytes = [UInt8](data)
        lock.withLock { byIdentifier[identifier] = bytes }
        return bytes
    }
}
