import Foundation
import GRDB
import PushTraceGzip
import PushTraceStore

extension BlockBuilder {
    /// Adds an accepted line, storing the block being filled first when the line would not fit in it.
    mutating func add(_ line: String, notificationID: String?, appID: String, db: Database) throws {
        try add(line, notificationID: notificationID, appID: appID) { try Self.insert($0, db) }
    }

    /// Stores the block being filled, compressed, with an index entry per notification it mentions.
    mutating func flush(_ db: Database) throws {
        try flush { try Self.insert($0, db) }
    }

    /// Stores a block and its index entries; returns its id.
    static func insert(_ block: FinishedBlock, _ db: Database) throws -> Int64 {
        try db.cachedStatement(
            sql: """
                INSERT INTO record_block (bundle_ref, lines, raw_bytes, dictionary, data) VALUES (?, ?, ?, ?, ?)
                """
        ).execute(arguments: [block.bundleRef, block.lines, block.rawBytes, block.dictionary, Data(block.data)])
        let id = db.lastInsertedRowID
        let index = try db.cachedStatement(sql: "INSERT OR IGNORE INTO notification_block (key, block) VALUES (?, ?)")
        for key in block.keys { try index.execute(arguments: [key, id]) }
        return id
    }
}
