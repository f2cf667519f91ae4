import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// The apps that have records for a notification ID (normally one).
    public func apps(forNotification id: String) throws -> [String] {
        try pool.read { try AppRows.storing(notification: NotificationKey.normalize(id), SQLiteSession(db: $0)) }
    }

    /// The answer to `why` for one notification of one app (an `unknown_notification` answer when nothing is stored),
    /// read in one snapshot.
    public func why(appID: String, notificationID: String) throws -> WhyReport {
        let key = NotificationKey.normalize(notificationID)
        let input = try pool.read { db in
            let reader = BlockReading(db, dictionaries: dictionaries)
            if let input = try reader.input(appID: appID, notificationID: key) { return input }
            let lines = try reader.lines(appID: appID, notificationID: key)
            return try reader.input(appID: appID, notificationID: key, lines: lines, cut: reader.cut)
        }
        return WhyReport(input: input, diagnosis: Diagnoser(settings: settings).diagnose(input))
    }

    /// The `log` records of one notification from every process, in time order.
    public func logs(appID: String, notificationID: String) throws -> [TimelineEntry] {
        let key = NotificationKey.normalize(notificationID)
        return try pool.read { db in
            DiagnosisAssembly.entries(
                try BlockReading(db, dictionaries: dictionaries).lines(appID: appID, notificationID: key), type: "log")
        }
    }

    /// Every accepted line that `filter` selects, in the order stored, in one read transaction.
    public func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        try pool.read { db in try BlockReading(db, dictionaries: dictionaries).export(filter, line) }
    }

    public func search(_ query: SearchQuery) throws -> [NotificationSummary] {
        try pool.read { db in try SQLiteSession(db: db).search(query) }
    }

    public func causeCounts(since: Int64) throws -> [CauseCount] {
        try pool.read { db in try SQLiteSession(db: db).causeCounts(since: since) }
    }
}

extension BlockReading<SQLiteSession> {
    /// The store's block reads on one connection, inside its read or write access.
    init(_ db: Database, dictionaries: BlockDictionaries) {
        self.init(SQLiteSession(db: db)) { dictionaries.lookup($0, in: db) }
    }

    /// The lines of the blocks `statement` selects (with ``columns``), one block at a time, in the order it gives.
    func forEachLine(_ statement: SQLStatement, _ body: (StoredLine) throws -> Void) throws {
        try session.each(statement) { row in try reader.forEachLine(of: Self.block(row), body) }
    }
}

extension BlockDictionaries {
    /// The dictionary a block's header names, read on this connection the first time.
    func lookup(_ identifier: UInt32, in db: Database) -> [UInt8]? { lookup(identifier, SQLiteSession(db: db)) }
}
