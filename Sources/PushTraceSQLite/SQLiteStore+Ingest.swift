import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// Runs `body` in one write transaction in which several bundles can be stored, each all-or-nothing on its
    /// own (a savepoint per bundle), and commits once at the end: many small bundles cost one commit, not one each.
    /// The bundles' per-notification facts are merged in memory and written to the summaries once, before the commit:
    /// a notification mentioned by several bundles of the group is upserted once, not once per bundle.
    ///
    /// With a `backlog`, the facts are not written in this transaction: they join the backlog once it has committed,
    /// and ``writeSummaries(_:)`` writes many groups' facts at once later (see ``SummaryBacklog``).
    ///
    /// Results obtained inside `body` are acknowledgements only once this returns: nothing is committed before.
    /// If `body` throws, nothing of the group is stored.
    func inGroupCommit<T>(
        deferringSummariesTo backlog: SummaryBacklog? = nil,
        _ body: (GroupCommit) throws -> T
    ) throws -> T {
        var committed: (result: T, group: GroupCommit)?
        // A dictionary trained by a group that then fails was never stored: forget it (and what it was cached with).
        defer { if committed == nil { dictionaries.forget() } }
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let group = GroupCommit(
                    db: db, settings: settings, defersSummaries: backlog != nil,
                    dictionaries: try TransactionDictionaries(dictionaries, SQLiteSession(db: db)))
                let result = try body(group)
                if backlog == nil { try group.summaries.write(db) }
                committed = (result, group)
                return .commit
            }
        }
        backlog?.add(committed!.group.summaries, bundles: committed!.group.storedBundles)
        return committed!.result
    }
}

/// Bundles being stored in one transaction (see ``SQLiteStore/inGroupCommit(deferringSummariesTo:_:)``), each
/// by the store's ``BundleWriter``; this holds SQLite's own part of it (``BundleRows``).
final class GroupCommit: IngestGroup, BundleRows {
    let db: Database
    let settings: DiagnosisSettings
    /// Whether the bundles' facts go to a backlog rather than to `notification` in this transaction.
    let defersSummaries: Bool
    /// The facts of the bundles stored so far, written to `notification` when the group commits (or handed to its
    /// backlog once it has).
    let summaries = PendingSummaries()
    /// The row ids of the bundles stored so far (duplicates and refused bundles left out).
    private(set) var storedBundles: [Int64] = []
    /// What the group's record blocks are compressed against, per app: an app's is trained between two bundles of
    /// the group once it holds enough lines (a bulk ingest's first group holds thousands of bundles).
    private var dictionaries: TransactionDictionaries<SQLiteSession>
    let configBodies = ConfigBodies()
    /// The client descriptions stored or met so far.
    private let clients = Clients()

    init(
        db: Database, settings: DiagnosisSettings, defersSummaries: Bool, dictionaries: TransactionDictionaries<SQLiteSession>
    ) {
        self.db = db
        self.settings = settings
        self.defersSummaries = defersSummaries
        self.dictionaries = dictionaries
    }

    // MARK: BundleRows

    var session: SQLiteSession { SQLiteSession(db: db) }
    var keepsBlockRange: Bool { true }

    func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        var result: T?
        try db.inSavepoint {
            result = try body()
            return .commit
        }
        return result!
    }

    func insertBundle(_ manifest: Manifest, tally: BundleTally, source: String?, receivedAt: Int64) throws -> Int64? {
        // Looked for first, so that a duplicate stores nothing, not even its client description.
        guard
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM bundle WHERE app_id = ? AND bundle_id = ?"),
                arguments: [manifest.appID, manifest.bundleID]) == nil
        else { return nil }
        let client = try clients.reference(Clients.Description(manifest), db: db)
        try db.cachedStatement(
            sql: """
                INSERT INTO bundle (app_id, bundle_id, device_id, client_ref, uploaded_at, received_at, clock_offset_ms, source,
                                    summarized)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            manifest.appID, manifest.bundleID, tally.deviceID, client, manifest.uploadedAt, receivedAt, tally.offset,
            source, !defersSummaries,
        ])
        return db.lastInsertedRowID
    }

    func dictionary(for appID: String) throws -> BlockDictionary { try dictionaries.current(for: appID) }

    func dictionaryBytes(_ identifier: UInt32) -> [UInt8]? { dictionaries.bytes(identifier) }

    func storeBlock(_ block: FinishedBlock) throws -> Int64 { try BlockBuilder.insert(block, db) }

    /// The pushes the device has not mentioned are settled again now, their counts taken out of the rollups until
    /// then.
    func heardFrom(_ device: DeviceSeen) throws {
        try session.mergeSummaries(
            PendingSummaries(),
            devices: [
                AwaitingDevice(
                    appID: device.appID, deviceID: device.deviceID, sentBy: device.last - settings.notDeliveredAfterMs)
            ])
    }

    func stored(_ bundle: StoredBundle) throws {
        try dictionaries.trainIfDue(appID: bundle.result.appID, added: bundle.storedBytes)
        summaries.merge(appID: bundle.result.appID, bundle.facts)
        storedBundles.append(bundle.ref)
    }

    /// The bundle's rows are gone with its savepoint: so are the bodies and clients it stored, which the group's
    /// memos must not hand to the next bundle.
    func bundleFailed() {
        configBodies.forget()
        clients.forget()
    }
}
