import Foundation
import PushTraceStore
import GRDB
import PushTraceGzip
import PushTraceRecords

/// The preset dictionaries record blocks are compressed against, kept in the store's `dictionary` table.
///
/// A store starts with none: its first blocks are deflated on their own. Once it holds ``trainingBytes`` of lines
/// compressed without one, a dictionary is trained from them (typical lines of every record shape the store has
/// seen) and every later block uses it. A dictionary is never changed or deleted once stored, since blocks name it
/// (by its Adler-32, in their zlib header); a later version may train a newer one, and old blocks still read.
enum RecordDictionaries {
    /// The dictionary new blocks are compressed against: its row id (0 for none) and bytes, and a deflater primed
    /// with it.
    struct Current {
        let id: Int64
        let bytes: [UInt8]
        let deflater: PrimedDeflater

        init(id: Int64, bytes: [UInt8]) {
            self.id = id
            self.bytes = bytes
            deflater = PrimedDeflater(dictionary: bytes, level: RecordBlock.level)
        }

        static var none: Current { Current(id: 0, bytes: []) }
    }

    /// Lines compressed without a dictionary after which one is trained.
    static let trainingBytes = 64 * 1024
    /// zlib's window: a longer dictionary's start could never be referred to.
    static let dictionaryBytes = 32 * 1024

    /// The newest dictionary, from `cache` when it is the one `cache` holds: a server commits every few
    /// milliseconds, and reading the dictionary and priming a deflater with it each time would be work done again.
    static func current(_ db: Database, cache: CurrentDictionary) throws -> Current {
        let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM dictionary")) ?? 0
        if let cached = cache.get(), cached.id == newest { return cached }
        let current: Current
        if newest == 0 {
            current = .none
        } else {
            let bytes = try Data.fetchOne(db.cachedStatement(sql: "SELECT bytes FROM dictionary WHERE id = ?"), arguments: [newest])
            current = Current(id: newest, bytes: [UInt8](bytes ?? Data()))
        }
        cache.set(current)
        return current
    }

    /// Trains and stores the store's first dictionary once enough lines were compressed without one, and returns
    /// it; otherwise returns `current`.
    static func trainIfDue(_ db: Database, current: Current) throws -> Current {
        guard current.id == 0 else { return current }
        let stored = try Int.fetchOne(db, sql: "SELECT coalesce(sum(raw_bytes), 0) FROM record_block WHERE dictionary = 0") ?? 0
        guard stored >= trainingBytes else { return current }
        var lines: [String] = []
        let blocks = try Row.fetchCursor(db, sql: "SELECT lines, raw_bytes, data FROM record_block WHERE dictionary = 0 ORDER BY id")
        while let block = try blocks.next() {
            lines += try RecordBlock.decode([UInt8](block[2] as Data), lines: block[0], rawBytes: block[1]) { _ in nil }
        }
        let bytes = train(lines)
        guard !bytes.isEmpty else { return current }
        try db.execute(sql: "INSERT INTO dictionary (adler32, trained_at, bytes) VALUES (?, ?, ?)",
                       arguments: [Int64(DictionaryDeflate.identifier(of: bytes)), Int64(Date().timeIntervalSince1970 * 1000),
                                   Data(bytes)])
        return Current(id: db.lastInsertedRowID, bytes: bytes)
    }

    /// A dictionary of typical lines: the latest few of each record shape (type, process, event), the most common
    /// shapes last, where deflate refers back to them most cheaply; more of each shape while there is room.
    static func train(_ lines: [String]) -> [UInt8] {
        var byShape: [String: [String]] = [:]
        var counts: [String: Int] = [:]
        for line in lines {
            var line = line
            let record = line.withUTF8 { Record(scanning: UnsafeRawBufferPointer($0)) }
            let shape = [record?.type, record?.process, record?.event].map { $0 ?? "" }.joined(separator: "/")
            counts[shape, default: 0] += 1
            var latest = byShape[shape, default: []]
            latest.append(line)
            if latest.count > 64 { latest.removeFirst() }
            byShape[shape] = latest
        }
        let shapes = counts.keys.sorted { (counts[$0]!, $0) < (counts[$1]!, $1) }
        // Least common first: when the shapes do not all fit, the common ones (at the end) are kept.
        // As many of each shape's latest lines as fit, the same number of each (fewer where a shape has fewer).
        var perShape = 1
        func assemble(_ count: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for shape in shapes {
                for line in byShape[shape]!.suffix(count) {
                    bytes.append(contentsOf: line.utf8)
                    bytes.append(UInt8(ascii: "\n"))
                }
            }
            return bytes
        }
        while perShape < 64, assemble(perShape * 2).count <= dictionaryBytes { perShape *= 2 }
        return Array(assemble(perShape).suffix(dictionaryBytes))
    }
}

/// The store's newest dictionary with its primed deflater, kept between group commits (one writes at a time).
final class CurrentDictionary: @unchecked Sendable {
    private let lock = NSLock()
    private var current: RecordDictionaries.Current?

    func get() -> RecordDictionaries.Current? { lock.withLock { current } }
    func set(_ value: RecordDictionaries.Current) { lock.withLock { current = value } }
}

/// Dictionaries read back by their Adler-32, shared by the store's connections: they never change once stored.
final class DictionaryCache: @unchecked Sendable {
    private let lock = NSLock()
    private var byIdentifier: [UInt32: [UInt8]] = [:]

    /// The dictionary a block's header names, read from `db` the first time.
    func lookup(_ identifier: UInt32, in db: Database) -> [UInt8]? {
        if let bytes = lock.withLock({ byIdentifier[identifier] }) { return bytes }
        guard let data = try? Data.fetchOne(db.cachedStatement(sql: "SELECT bytes FROM dictionary WHERE adler32 = ?"),
                                            arguments: [Int64(identifier)]) else { return nil }
        let bytes = [UInt8](data)
        lock.withLock { byIdentifier[identifier] = bytes }
        return bytes
    }
}
