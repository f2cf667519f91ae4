import Foundation
import PushTraceStore
import GRDB
import PushTraceGzip

/// A run of one bundle's accepted lines, stored compressed as one row of `record_block`.
///
/// The lines are kept exactly as received, in the order received, joined by `\n` (a received line never holds
/// one), and deflated against the app's newest dictionary (else the store's shared one, else none) (``RecordDictionaries``). Everything else the
/// old per-record table held is derived again when the block is read: the time from the line and its bundle's
/// clock offset, the device from its bundle, the type, event and notification from the line.
enum RecordBlock {
    /// The most lines one block holds: a backend's daily `push.sent` file is split into blocks this size, so that
    /// reading one notification's records decompresses a few hundred lines, not the whole file.
    static let maxLines = 256
    /// The most bytes of lines one block holds (a line is at most `WireBounds.maxLineBytes`).
    static let maxBytes = 256 * 1024
    /// zlib's compression level for blocks: a block is written once and read many times.
    static let level: Int32 = 6

    /// The lines of a stored block (`LineBlock` in PushTraceGzip decodes them).
    static func decode(_ data: [UInt8], lines: Int, rawBytes: Int, dictionaries: (UInt32) -> [UInt8]?) throws(LineBlockError) -> [String] {
        guard lines <= maxLines else { throw LineBlockError.declared(lines: lines, bytes: rawBytes) }
        return try LineBlock.decode(data, lines: lines, rawBytes: rawBytes, dictionaries: dictionaries)
    }
}

/// The key of `notification_block`: which blocks hold a notification's records.
///
/// A 64-bit FNV-1a hash of the app and the notification ID rather than the two strings, so that each entry is a
/// few bytes. Two notifications may share a key; a reader keeps only the lines of the app and notification it
/// asked for, so a shared key costs a block read, never a wrong answer. The hash is part of the file format: it
/// never changes.
enum NotificationBlockKey {
    static func of(appID: String, notificationID: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        for byte in appID.utf8 { mix(byte) }
        mix(0)
        for byte in notificationID.utf8 { mix(byte) }
        return Int64(bitPattern: hash)
    }
}

/// Fills and stores one bundle's record blocks, a line at a time; used by ingest and by the conversion of stores
/// that kept a row per record.
struct BlockBuilder {
    /// The bundle the blocks belong to.
    var bundleRef: Int64 = 0
    /// The row ids of the bundle's first and last blocks (contiguous: one writer inserts them in a row).
    private(set) var first: Int64?
    private(set) var last: Int64?
    private let dictionary: RecordDictionaries.Current
    private var lines: [String] = []
    private var bytes = 0
    /// The index keys of the notifications the block being filled mentions.
    private var keys: Set<Int64> = []
    /// Bytes of lines stored in blocks so far.
    private(set) var storedBytes = 0

    init(dictionary: RecordDictionaries.Current) {
        self.dictionary = dictionary
    }

    /// Adds an accepted line, storing the block being filled first when the line would not fit in it.
    mutating func add(_ line: String, notificationID: String?, appID: String, db: Database) throws {
        let size = line.utf8.count + 1
        if lines.count == RecordBlock.maxLines || (!lines.isEmpty && bytes + size > RecordBlock.maxBytes) {
            try flush(db)
        }
        lines.append(line)
        bytes += size
        if let notificationID { keys.insert(NotificationBlockKey.of(appID: appID, notificationID: notificationID)) }
    }

    /// Stores the block being filled, compressed, with an index entry per notification it mentions.
    mutating func flush(_ db: Database) throws {
        guard !lines.isEmpty else { return }
        let block = LineBlock.compress(lines, with: dictionary.deflater)
        try db.cachedStatement(sql: """
            INSERT INTO record_block (bundle_ref, lines, raw_bytes, dictionary, data) VALUES (?, ?, ?, ?, ?)
            """).execute(arguments: [bundleRef, lines.count, block.rawBytes, dictionary.id, Data(block.data)])
        let id = db.lastInsertedRowID
        let index = try db.cachedStatement(sql: "INSERT OR IGNORE INTO notification_block (key, block) VALUES (?, ?)")
        for key in keys.sorted() { try index.execute(arguments: [key, id]) }
        storedBytes += block.rawBytes
        if first == nil { first = id }
        last = id
        lines.removeAll(keepingCapacity: true)
        bytes = 0
        keys.removeAll(keepingCapacity: true)
    }
}

/// A config record's line as `config_body.body` keeps it: deflated against its app's dictionary (config lines are
/// long and every bundle of a device repeats them), as a blob. Stores written before kept the text itself, which
/// reads back as it is.
enum ConfigBody {
    static func compressed(_ line: String, dictionary: RecordDictionaries.Current) -> Data {
        Data(LineBlock.compress([line], with: dictionary.deflater).data)
    }

    static func text(_ value: DatabaseValue, dictionaries: DictionaryCache, db: Database) throws -> String {
        switch value.storage {
        case .string(let text): return text
        case .blob(let data):
            // Output grows as it is decoded; the bound only stops a damaged blob.
            let bytes = try [UInt8](data).withUnsafeBytes { input in
                try DictionaryDeflate.decompress(input, limit: Int(Int32.max)) { dictionaries.lookup($0, in: db) }
            }
            return String(decoding: bytes, as: UTF8.self)
        default:
            throw DatabaseError(message: "a stored config record has no body")
        }
    }
}
