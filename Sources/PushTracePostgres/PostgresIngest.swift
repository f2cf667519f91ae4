import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// Summaries are merged as each group commits (``IngestSession/defersSummaries`` is false): with several servers
    /// on one database, a summary merged under its row lock at commit is what every server reads.
    public func makeIngestSession(deferringSummaries: Bool) throws -> any IngestSession {
        PostgresIngestSession(store: self)
    }
}

/// A writer's session on a PostgreSQL store: each group one transaction, its summaries merged before it commits.
final class PostgresIngestSession: IngestSession {
    private let store: PostgresStore
    /// Ids taken ahead from the bundle and block sequences, so that a row's insert is sent without waiting for the
    /// id it was given. Kept from group to group: an id taken by a group that failed is a gap, never a reuse.
    private let bundleIDs = ReservedIDs(sequence: "bundle_id_seq", batch: 64)
    private let blockIDs = ReservedIDs(sequence: "record_block_id_seq", batch: 256)
    /// How often a group that met another server's transaction in a deadlock or a serialization failure is run
    /// again before its error is the answer.
    static let attempts = 4

    init(store: PostgresStore) {
        self.store = store
    }

    var defersSummaries: Bool { false }
    var hasPendingSummaries: Bool { false }
    func summariesDue(after delay: Duration, notifications: Int) -> Bool { false }
    func writeSummaries() throws {}

    /// A group that fails (another server's transaction held rows this one needed in another order: a deadlock)
    /// leaves nothing behind; the server's writer then stores its bundles one by one, and `pushtrace ingest`
    /// reports the failure. The group is not run again here: its body may not be one that can run twice.
    func inGroupCommit<T>(_ body: (any IngestGroup) throws -> T) throws -> T {
        do {
            return try store.writing { session in
                do {
                    try store.dictionaries.refresh(session)
                    let group = PostgresGroup(session: session, store: store, bundleIDs: bundleIDs, blockIDs: blockIDs)
                    let result = try body(group)
                    try session.mergeSummaries(group.summaries, devices: group.devices)
                    return result
                }
            }
        } catch {
            store.dictionaries.forget()
            throw error
        }
    }
}

extension PostgresFailure {
    /// A deadlock, a serialization failure or a lock waited for too long: the transaction was undone and may simply
    /// be run again.
    static func isTransientConflict(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        let state = error.serverInfo?[.sqlState]
        return state == "40P01" || state == "40001" || state == "55P03"
    }
}

/// Bundles being stored in one transaction of a PostgreSQL store, each by the store's ``BundleWriter``; this holds
/// PostgreSQL's own part of it (``BundleRows``).
final class PostgresGroup: IngestGroup, BundleRows {
    let session: PostgresSession
    let store: PostgresStore
    /// The facts of the bundles stored so far, merged into the summaries before the group commits.
    let summaries = PendingSummaries()
    /// The devices whose uploads may unsettle pushes that waited for them, handled with the summaries.
    var devices: Set<AwaitingDevice> = []
    let configBodies = ConfigBodies()
    private let bundleIDs: ReservedIDs
    private let blockIDs: ReservedIDs
    /// The answer to the insert of the bundle being stored, sent without waiting: no row inserted means the bundle
    /// was stored before.
    private var bundleInsert: EventLoopFuture<PostgresQueryResult>?

    init(session: PostgresSession, store: PostgresStore, bundleIDs: ReservedIDs, blockIDs: ReservedIDs) {
        self.session = session
        self.store = store
        self.bundleIDs = bundleIDs
        self.blockIDs = blockIDs
    }

    // MARK: BundleRows

    var keepsBlockRange: Bool { false }

    /// The bundle's statements are sent without waiting, and their answers waited for once, at its end. A failure
    /// among them undoes the bundle alone; so does finding that its row was stored before (then every statement
    /// after the row's insert may have failed for want of it).
    func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        do {
            return try session.savepoint {
                bundleInsert = nil
                let result: T
                do {
                    result = try body()
                    try session.settle()
                } catch {
                    if try insertedNothing() { throw BundleStoredBefore() }
                    throw error
                }
                if try insertedNothing() { throw BundleStoredBefore() }
                return result
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState]?.hasPrefix("22") == true {
            // A value PostgreSQL cannot hold (data exception): this bundle is refused, the group goes on.
            throw BundleError(
                .undecodable,
                "the bundle holds a value the database cannot store "
                    + "(PostgreSQL \(error.serverInfo?[.sqlState] ?? ""))")
        }
    }

    /// The same bundle sent to two servers at once: the second insert waits for the first transaction and, once it
    /// commits, inserts nothing; that bundle is then a duplicate here, found at its end (``inSavepoint(_:)``).
    func insertBundle(_ manifest: Manifest, tally: BundleTally, source: String?, receivedAt: Int64) throws -> Int64? {
        let id = try bundleIDs.next(session)
        bundleInsert = session.sendWatched(
            PostgresSession.query(
                """
                INSERT INTO bundle (id, app_id, bundle_id, device_id, app_version, build, os, device_model, sdk,
                                    uploaded_at, received_at, clock_offset_ms, source)
                VALUES (\(id), \(manifest.appID), \(manifest.bundleID), \(tally.deviceID), \(manifest.appVersion),
                        \(manifest.build), \(manifest.os), \(manifest.deviceModel), \(manifest.sdk), \(manifest.uploadedAt),
                        \(receivedAt), \(tally.offset), \(source))
                ON CONFLICT (app_id, bundle_id) DO NOTHING
                """, session.dialect))
        return id
    }

    /// Whether the bundle's row insert, sent earlier, inserted nothing (waited for if it has not been answered).
    private func insertedNothing() throws -> Bool {
        guard let insert = bundleInsert else { return false }
        bundleInsert = nil
        guard let answer = try? PostgresSession.wait(insert, connection: session.connection, deadline: session.deadline)
        else { return false }
        return (answer.metadata.rows ?? 0) == 0
    }

    func dictionary(for appID: String) throws -> BlockDictionary { try store.dictionaries.current(for: appID, session) }

    func dictionaryBytes(_ identifier: UInt32) -> [UInt8]? { store.dictionaries.lookup(identifier, session) }

    /// Stores a block, and its index entries in one statement, neither waited for.
    func storeBlock(_ block: FinishedBlock) throws -> Int64 {
        let id = try blockIDs.next(session)
        session.send(
            """
            INSERT INTO record_block (id, bundle_ref, lines, raw_bytes, dictionary, data)
            VALUES (\(id), \(block.bundleRef), \(Int64(block.lines)), \(Int64(block.rawBytes)), \(block.dictionary), \(ByteBuffer(bytes: block.data)))
            """)
        if !block.keys.isEmpty {
            session.send(
                """
                INSERT INTO notification_block (key, block) SELECT unnest(\(block.keys)::bigint[]), \(id) ON CONFLICT DO NOTHING
                """)
        }
        return id
    }

    /// The pushes the device has not mentioned are settled again with the group's summaries, under their row locks.
    func heardFrom(_ device: DeviceSeen) throws {}

    func stored(_ bundle: StoredBundle) throws {
        try store.dictionaries.trainIfDue(appID: bundle.result.appID, added: bundle.storedBytes, session)
        summaries.merge(appID: bundle.result.appID, bundle.facts)
        if let device = bundle.device {
            devices.insert(
                AwaitingDevice(
                    appID: device.appID, deviceID: device.deviceID,
                    sentBy: device.last - store.settings.notDeliveredAfterMs))
        }
    }

    /// The bundle's rows are gone with its savepoint: so are the config bodies it stored.
    func bundleFailed() { configBodies.forget() }
}

/// Ids taken from a sequence ahead of the rows that will carry them, a batch at a time: one round trip a batch
/// rather than one a row. Used by one writer thread at a time.
final class ReservedIDs: @unchecked Sendable {
    private let sequence: String
    private let batch: Int
    private var ids: [Int64] = []

    init(sequence: String, batch: Int) {
        self.sequence = sequence
        self.batch = batch
    }

    func next(_ session: PostgresSession) throws -> Int64 {
        if ids.isEmpty {
            ids = try session.query(
                PostgresQuery(unsafeSQL: "SELECT nextval('\(sequence)') FROM generate_series(1, \(batch))")
            ).map { try $0.decode(Int64.self) }.reversed()
        }
        return ids.removeLast()
    }
}
