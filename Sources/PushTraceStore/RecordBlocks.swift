import PushTraceGzip

/// A run of one bundle's accepted lines, stored compressed as one block (a row of `record_block` in every engine).
///
/// The lines are kept exactly as received, in the order received, joined by `\n` (a received line never holds
/// one), and deflated against the app's newest dictionary (else the store's shared one, else none). Everything
/// else a per-record table would hold is derived again when the block is read: the time from the line and its
/// bundle's clock offset, the device from its bundle, the type, event and notification from the line.
package enum RecordBlock {
    /// The most lines one block holds: a backend's daily `push.sent` file is split into blocks this size, so that
    /// reading one notification's records decompresses a few hundred lines, not the whole file.
    package static let maxLines = 256
    /// The most bytes of lines one block holds (a line is at most `WireBounds.maxLineBytes`).
    package static let maxBytes = 256 * 1024
    /// The most bytes of lines any stored block holds: a block is full at ``maxBytes``, or holds one longer line, and
    /// the CLI and the server accept lines of at most 1 GiB.
    package static let maxRawBytes = maxBytes + 1 << 30
    /// zlib's compression level for blocks: a block is written once and read many times.
    package static let level: Int32 = 6

    /// The lines of a stored block (`LineBlock` in PushTraceGzip decodes them).
    package static func decode(
        _ data: [UInt8], lines: Int, rawBytes: Int,
        dictionaries: (UInt32) -> [UInt8]?
    ) throws(LineBlockError) -> [String] {
        // No block pushtrace writes is larger: a damaged row cannot make a read allocate more.
        guard lines <= maxLines, rawBytes <= maxRawBytes else {
            throw LineBlockError.declared(lines: lines, bytes: rawBytes)
        }
        return try LineBlock.decode(data, lines: lines, rawBytes: rawBytes, dictionaries: dictionaries)
    }
}

/// The key of the notification→block index: which blocks hold a notification's records.
///
/// A 64-bit FNV-1a hash of the app and the notification ID rather than the two strings, so that each entry is a
/// few bytes. Two notifications may share a key; a reader keeps only the lines of the app and notification it
/// asked for, so a shared key costs a block read, never a wrong answer. The hash is part of the file format: it
/// never changes.
package enum NotificationBlockKey {
    package static func of(appID: String, notificationID: String) -> Int64 {
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

/// The dictionary new blocks are compressed against: its row id in the store (0 for none), the app it was trained
/// for (nil: shared by every app) and its bytes, with a deflater primed with it.
package struct BlockDictionary {
    package let id: Int64
    package let appID: String?
    package let bytes: [UInt8]
    package let deflater: PrimedDeflater

    package init(id: Int64, appID: String?, bytes: [UInt8]) {
        self.id = id
        self.appID = appID
        self.bytes = bytes
        deflater = PrimedDeflater(dictionary: bytes, level: RecordBlock.level)
    }

    package static var none: BlockDictionary { BlockDictionary(id: 0, appID: nil, bytes: []) }
}

/// A block ready to be stored, with the index keys of the notifications its lines mention.
package struct FinishedBlock {
    /// The store's id of the bundle whose lines it holds.
    package var bundleRef: Int64
    package var lines: Int
    package var rawBytes: Int
    /// The store's id of the dictionary it was compressed against (0: none).
    package var dictionary: Int64
    package var data: [UInt8]
    /// ``NotificationBlockKey``s, sorted.
    package var keys: [Int64]
}

/// Fills one bundle's record blocks a line at a time and hands each finished block to the engine to store.
package struct BlockBuilder {
    /// The store's id of the bundle the blocks belong to.
    package var bundleRef: Int64 = 0
    /// The ids the engine gave the bundle's first and last blocks (contiguous: one writer stores them in a row).
    package private(set) var first: Int64?
    package private(set) var last: Int64?
    private let dictionary: BlockDictionary
    private var lines: [String] = []
    private var bytes = 0
    /// The index keys of the notifications the block being filled mentions.
    private var keys: Set<Int64> = []
    /// Bytes of lines stored in blocks so far.
    package private(set) var storedBytes = 0

    package init(dictionary: BlockDictionary) {
        self.dictionary = dictionary
    }

    /// Adds an accepted line, storing the block being filled first when the line would not fit in it; `store`
    /// stores a block and returns its id.
    package mutating func add(
        _ line: String, notificationID: String?, appID: String,
        store: (FinishedBlock) throws -> Int64
    ) throws {
        let size = line.utf8.count + 1
        if lines.count == RecordBlock.maxLines || (!lines.isEmpty && bytes + size > RecordBlock.maxBytes) {
            try flush(store: store)
        }
        lines.append(line)
        bytes += size
        if let notificationID { keys.insert(NotificationBlockKey.of(appID: appID, notificationID: notificationID)) }
    }

    /// Compresses the block being filled and hands it to `store`.
    package mutating func flush(store: (FinishedBlock) throws -> Int64) throws {
        guard !lines.isEmpty else { return }
        let block = LineBlock.compress(lines, with: dictionary.deflater)
        let id = try store(
            FinishedBlock(
                bundleRef: bundleRef, lines: lines.count, rawBytes: block.rawBytes, dictionary: dictionary.id,
                data: block.data, keys: keys.sorted()))
        storedBytes += block.rawBytes
        if first == nil { first = id }
        last = id
        lines.removeAll(keepingCapacity: true)
        bytes = 0
        keys.removeAll(keepingCapacity: true)
    }
}

/// A config record's line as the store keeps it: deflated against its app's dictionary (config lines are long and
/// every bundle of a device repeats them).
package enum ConfigBody {
    package static func compressed(_ line: String, dictionary: BlockDictionary) -> [UInt8] {
        LineBlock.compress([line], with: dictionary.deflater).data
    }

    /// A compressed body's line; `dictionaries` finds a dictionary by its Adler-32. Output grows as it is decoded;
    /// the bound only stops a damaged body.
    package static func text(compressed bytes: [UInt8], dictionaries: (UInt32) -> [UInt8]?) throws -> String {
        let line = try bytes.withUnsafeBytes { input in
            try DictionaryDeflate.decompress(input, limit: Int(Int32.max), dictionary: dictionaries)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// A stored body's line: deflated, or (a SQLite store written before bodies were) the text itself.
    package static func text(stored value: SQLValue, dictionaries: (UInt32) -> [UInt8]?) throws -> String {
        switch value {
        case .bytes(let bytes): return try text(compressed: bytes, dictionaries: dictionaries)
        case .text(let text): return text
        default: throw StoreError.wrongType("body", expected: "bytes", found: value)
        }
    }
}

/// The digest a config body is found again by (`config_body.digest`): 64-bit FNV-1a of the line's UTF-8 bytes.
/// Part of the file format: it never changes.
package enum ConfigBodyDigest {
    package static func of(_ line: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in line.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}
