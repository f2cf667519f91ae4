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
                    let group = PostgresGroup(session: session, store: store)
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

    init(session: PostgresSession, store: PostgresStore) {
        self.session = session
        self.store = store
    }

    // MARK: BundleRows

    var keepsBlockRange: Bool { false }

    func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        do {
            return try session.savepoint(body)
        } catch let error as PSQLError where error.serverInfo?[.sqlState]?.hasPrefix("22") == true {
            // A value PostgreSQL cannot hold (data exception): this bundle is refused, the group goes on.
            throw BundleError(
                .undecodable,
                "the bundle holds a value the database cannot store "
                    + "(PostgreSQL \(error.serverInfo?[.sqlState] ?? ""))")
        }
    }

    /// The same bundle sent to two servers at once: the second insert waits for the first transaction and, once it
    /// commits, inserts nothing; that bundle is then a duplicate here.
    func insertBundle(_ manifest: Manifest, tally: BundleTally, source: String?, receivedAt: Int64) throws -> Int64? {
        try session.query(
            """
            INSERT INTO bundle (app_id, bundle_id, device_id, app_version, build, os, device_model, sdk, uploaded_at,
                                received_at, clock_offset_ms, source)
            VALUES (\(manifest.appID), \(manifest.bundleID), \(tally.deviceID), \(manifest.appVersion), \(manifest.build),
                    \(manifest.os), \(manifest.deviceModel), \(manifest.sdk), \(manifest.uploadedAt), \(receivedAt),
                    \(tally.offset), \(source))
            ON CONFLICT (app_id, bundle_id) DO NOTHING RETURNING id
            """
        ).first(where: { _ in true })?.decode(Int64.self)
    }

    func dictionary(for appID: String) throws -> BlockDictionary { try store.dictionaries.current(for: appID, session) }

    func dictionaryBytes(_ identifier: UInt32) -> [UInt8]? { store.dictionaries.lookup(identifier, session) }

    /// Stores a block, and its index entries in one statement.
    func storeBlock(_ block: FinishedBlock) throws -> Int64 {
        let id = try session.query(
            """
            INSERT INTO record_block (bundle_ref, lines, raw_bytes, dictionary, data)
            VALUES (\(block.bundleRef), \(Int64(block.lines)), \(Int64(block.rawBytes)), \(block.dictionary), \(ByteBuffer(bytes: block.data)))
            RETURNING id
            """
        ).first(where: { _ in true })!.decode(Int64.self)
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
