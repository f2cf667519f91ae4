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
/// ``trainingBytes`` of lines from several devices, a dictionary is trained from them (typical lines of every
/// record shape it has, ``DictionaryTraining``), and again as its volume grows; new blocks take the newest. A
/// dictionary is never changed once stored, since blocks name it (by its Adler-32, in their zlib header).
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
        /// The app's newest bundles do not yet hold a full sample (``DictionaryTraining/Sample``).
        case notYet
        case trained(Current)
        /// Another dictionary has the same Adler-32 (blocks name theirs by it): the app goes on with what it had.
        case clash
    }

    /// How many dictionaries `appID` has trained: the next one waits for more lines each time.
    static func generation(_ db: Database, appID: String) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM dictionary WHERE app_id = ?"), arguments: [appID]) ?? 0
    }

    /// Trains and stores a dictionary for `appID` from a sample of its stored lines: the first block of each of
    /// its newest bundles, whatever it was compressed against, a few devices' worth at least.
    static func train(_ db: Database, appID: String, dictionaries: DictionaryCache) throws -> Training {
        var sample = DictionaryTraining.Sample()
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT b.device_id, b.id, r.lines, r.raw_bytes, r.data FROM bundle b JOIN record_block r ON r.id = b.first_block
                    WHERE b.app_id = ? ORDER BY b.id DESC LIMIT ?
                    """), arguments: [appID, DictionaryTraining.sampledBundles])
        while !sample.isFull, let row = try rows.next() {
            let source = DictionaryTraining.source(deviceID: row[0], bundle: row[1])
            guard sample.wants(source) else { continue }
            // A damaged block is left out of the sample: training never stops an ingest.
            let data: Data = row[4]
            guard
                let lines = try? RecordBlock.decode(
                    [UInt8](data), lines: row[2], rawBytes: row[3],
                    dictionaries: {
                        dictionaries.lookup($0, in: db)
                    })
            else { continue }
            sample.offer(lines, source: source)
        }
        guard sample.isEnough else { return .notYet }
        let bytes = DictionaryTraining.dictionary(from: sample.lines)
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
    /// Per app: bytes of lines stored since its training was last looked at (nil: not yet by this process).
    /// Training is looked at again only once enough more were stored (``DictionaryTraining/
    /// retrainingBytes(afterGeneration:)``), so a stream of small or empty bundles costs no scan of the app's
    /// bundles each.
    private var sinceLastLook: [String: Int] = [:]
    /// Per app with dictionaries of its own: how many (``generation(_:read:)``).
    private var generations: [String: Int] = [:]
    /// Per app: looks in a row that found no full sample (``DictionaryTraining/lookBytes(generation:misses:)``).
    private var misses: [String: Int] = [:]

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
            generations.removeAll()
            misses.removeAll()
            newestID = -1
        }
    }

    /// Whether `appID`'s training is worth looking at, with `added` bytes of lines just stored. An app without a
    /// dictionary of its own is looked at the first time; one with a dictionary starts counting, so that a restart
    /// trains nothing.
    fileprivate func isDue(_ appID: String, added: Int, hasOwn: Bool) -> Bool {
        lock.withLock {
            guard let seen = sinceLastLook[appID] else {
                if hasOwn { sinceLastLook[appID] = added }
                return !hasOwn
            }
            sinceLastLook[appID] = seen + added
            // The generation is read only when a look may be due: the smallest threshold is the first.
            return seen + added >= RecordDictionaries.trainingBytes
        }
    }

    /// Bytes counted toward `appID`'s next training, and the looks in a row that found no full sample.
    fileprivate func counted(_ appID: String) -> (bytes: Int, misses: Int) {
        lock.withLock { (sinceLastLook[appID] ?? 0, misses[appID] ?? 0) }
    }

    /// How many dictionaries `appID` has, read once by `read` and remembered until it trains another.
    fileprivate func generation(_ appID: String, read: () throws -> Int) rethrows -> Int {
        if let known = lock.withLock({ generations[appID] }) { return known }
        let generation = try read()
        lock.withLock { generations[appID] = generation }
        return generation
    }

    fileprivate func missed(_ appID: String) {
        lock.withLock {
            sinceLastLook[appID] = 0
            misses[appID, default: 0] += 1
        }
    }

    fileprivate func trained(_ appID: String) {
        lock.withLock {
            sinceLastLook[appID] = 0
            misses[appID] = nil
            generations[appID] = nil
        }
    }
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

    /// Trains a dictionary for `appID` when enough lines were stored since the last one (its first, once it has a
    /// full sample); call after a bundle that stored `added` bytes of lines.
    func trainIfDue(appID: String, added: Int) throws {
        let hasOwn = try current(for: appID).appID == appID
        guard shared.isDue(appID, added: added, hasOwn: hasOwn) else { return }
        let counted = shared.counted(appID)
        if hasOwn || counted.misses > 0 {
            let generation = hasOwn ? try shared.generation(appID) { try RecordDictionaries.generation(db, appID: appID) } : 0
            guard counted.bytes >= DictionaryTraining.lookBytes(generation: generation, misses: counted.misses) else { return }
        }
        switch try RecordDictionaries.train(db, appID: appID, dictionaries: dictionaries) {
        case .notYet, .clash: shared.missed(appID)
        case .trained(let trained):
            shared.set(appID, trained, trained: true)
            shared.trained(appID)
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
