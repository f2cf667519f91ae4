import Foundation
import NIOCore
import PostgresNIO
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension PostgresStore {
    /// Two groups in flight, each in a session of its own: one writer spends much of a group waiting on
    /// PostgreSQL's answers and its commit, and more than two wait on each other's row locks (docs/decisions.md).
    public var concurrentWriters: Int { 2 }

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
                    let group = try PostgresGroup(session: session, store: store, bundleIDs: bundleIDs, blockIDs: blockIDs)
                    let result = try body(group)
                    try group.writeBlocks()
                    try group.writeDevices()
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
    /// What the group's blocks are compressed against, and the dictionaries it trained, its own until it commits.
    private var dictionaries: TransactionDictionaries<PostgresSession>
    private let bundleIDs: ReservedIDs
    private let blockIDs: ReservedIDs
    /// The answer to the insert of the bundle being stored, sent without waiting: no row inserted means the bundle
    /// was stored before.
    private var bundleInsert: EventLoopFuture<PostgresQueryResult>?
    /// The manifest of the bundle being stored, whose row is inserted at its end with its counts, and what was
    /// known of it at its beginning.
    private var manifest: Manifest?
    private var beginning: (tally: BundleTally, source: String?, receivedAt: Int64)?
    /// Whether the bundle's row was inserted before its end: its blocks had to be written early (a large bundle),
    /// and they refer to it.
    private var rowInserted = false
    /// Blocks of the group's stored bundles (and of the one being stored, from ``currentBlocks``) not written yet:
    /// written many to a statement when they are many, and before the group's summaries.
    private var blocks = PendingBlocks()
    private var currentBlocks = 0
    /// The devices of the group's stored bundles, written once, in key order, before the group's summaries: two
    /// servers' groups lock device rows in one order. The bundle being stored is in ``currentDevice`` until it is.
    private var visits: [DeviceKey: (visit: DeviceVisit, settingsChanged: Bool)] = [:]
    private var currentDevice: (visit: DeviceVisit, settingsChanged: Bool)?

    init(session: PostgresSession, store: PostgresStore, bundleIDs: ReservedIDs, blockIDs: ReservedIDs) throws {
        self.session = session
        self.store = store
        self.bundleIDs = bundleIDs
        self.blockIDs = blockIDs
        dictionaries = try TransactionDictionaries(store.dictionaries, session)
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
                // What follows is this bundle's, even if it fails before its manifest.
                currentBlocks = blocks.count
                currentDevice = nil
                manifest = nil
                rowInserted = false
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

    /// Answers the id the bundle's row will have; the row itself is inserted at the bundle's end, with its counts
    /// (``bundleEnded(ref:tally:source:receivedAt:firstBlock:lastBlock:)``).
    func insertBundle(_ manifest: Manifest, tally: BundleTally, source: String?, receivedAt: Int64) throws -> Int64? {
        self.manifest = manifest
        beginning = (tally, source, receivedAt)
        currentBlocks = blocks.count
        return try bundleIDs.next(session)
    }

    /// The bundle's row as known so far, for blocks written before its end; its counts are updated at its end.
    private func insertRowEarly(ref: Int64) {
        guard !rowInserted, let beginning else { return }
        sendRowInsert(ref: ref, tally: beginning.tally, source: beginning.source, receivedAt: beginning.receivedAt)
        rowInserted = true
    }

    /// The same bundle sent to two servers at once: the second insert waits for the first transaction and, once it
    /// commits, inserts nothing; that bundle is then a duplicate here, found at its end (``inSavepoint(_:)``).
    func bundleEnded(
        ref: Int64, tally: BundleTally, source: String?, receivedAt: Int64, firstBlock: Int64?, lastBlock: Int64?
    ) throws {
        if rowInserted {
            // Inserted early (its blocks refer to it): its counts now.
            return try session.bundleCounted(ref: ref, tally: tally, blockRange: nil)
        }
        sendRowInsert(ref: ref, tally: tally, source: source, receivedAt: receivedAt)
    }

    /// Sends the insert of the bundle's row, watched: no row inserted means the bundle was stored before.
    private func sendRowInsert(ref: Int64, tally: BundleTally, source: String?, receivedAt: Int64) {
        guard let manifest else { preconditionFailure("a bundle's row is written after its manifest") }
        let spans = tally.spans
        bundleInsert = session.sendWatched(
            PostgresSession.query(
                """
                INSERT INTO bundle (id, app_id, bundle_id, device_id, app_version, build, os, device_model, sdk,
                                    uploaded_at, received_at, clock_offset_ms, source, accepted, rejected,
                                    ts_from, ts_to, config_ts_from, config_ts_to)
                VALUES (\(ref), \(manifest.appID), \(manifest.bundleID), \(tally.deviceID), \(manifest.appVersion),
                        \(manifest.build), \(manifest.os), \(manifest.deviceModel), \(manifest.sdk), \(manifest.uploadedAt),
                        \(receivedAt), \(tally.offset), \(source), \(tally.accepted), \(tally.rejected),
                        \(spans.lines?.from), \(spans.lines?.to), \(spans.configFrom), \(spans.configTo))
                ON CONFLICT (app_id, bundle_id) DO NOTHING
                """, session.dialect))
    }

    /// Whether the bundle's row insert, sent earlier, inserted nothing (waited for if it has not been answered).
    private func insertedNothing() throws -> Bool {
        guard let insert = bundleInsert else { return false }
        bundleInsert = nil
        guard let answer = try? PostgresSession.wait(insert, connection: session.connection, deadline: session.deadline)
        else { return false }
        return (answer.metadata.rows ?? 0) == 0
    }

    func dictionary(for appID: String) throws -> BlockDictionary {
        try dictionaries.current(for: appID)
    }

    func dictionaryBytes(_ identifier: UInt32) -> [UInt8]? { dictionaries.bytes(identifier) }

    /// Keeps a block to be written with others; a bundle whose own blocks are many writes them at once, inside its
    /// savepoint (the blocks of bundles before it are never written there: undoing the bundle would undo them).
    func storeBlock(_ block: FinishedBlock) throws -> Int64 {
        let id = try blockIDs.next(session)
        blocks.append(block, id: id)
        if blocks.bytes(from: currentBlocks) >= PendingBlocks.bytesPerWrite {
            insertRowEarly(ref: block.bundleRef)
            try blocks.write(from: currentBlocks, session)
            currentBlocks = blocks.count
        }
        return id
    }

    /// Kept for the group's end (``writeDevices()``).
    func deviceSeen(_ visit: DeviceVisit, settingsChanged: Bool) throws {
        currentDevice = (visit, settingsChanged)
    }

    /// Writes the group's devices in key order, then the settings summaries of those whose bundles stored settings.
    func writeDevices() throws {
        let sorted = visits.sorted { NotificationRowKey.precedes($0.key.rowKey, $1.key.rowKey) }.map(\.value)
        visits.removeAll()
        try session.devicesSeen(sorted.map(\.visit))
        for (visit, changed) in sorted where changed {
            try session.deviceSettingsChanged(appID: visit.appID, deviceID: visit.deviceID)
        }
    }

    /// Writes the blocks kept so far: called between bundles, and before the group's summaries.
    func writeBlocks() throws {
        try blocks.write(from: 0, session)
        currentBlocks = 0
    }

    /// The pushes the device has not mentioned are settled again with the group's summaries, under their row locks.
    func heardFrom(_ device: DeviceSeen) throws {}

    func stored(_ bundle: StoredBundle) throws {
        manifest = nil
        beginning = nil
        rowInserted = false
        currentBlocks = blocks.count
        if let (visit, changed) = currentDevice {
            let key = DeviceKey(appID: visit.appID, deviceID: visit.deviceID)
            if var kept = visits[key] {
                kept.visit.add(visit)
                kept.settingsChanged = kept.settingsChanged || changed
                visits[key] = kept
            } else {
                visits[key] = (visit, changed)
            }
            currentDevice = nil
        }
        if blocks.bytes(from: 0) >= PendingBlocks.bytesPerWrite || blocks.count >= PendingBlocks.rowsPerWrite {
            try writeBlocks()
        }
        try dictionaries.trainIfDue(appID: bundle.result.appID, added: bundle.storedBytes)
        summaries.merge(appID: bundle.result.appID, bundle.facts)
        if let device = bundle.device {
            devices.insert(
                AwaitingDevice(
                    appID: device.appID, deviceID: device.deviceID,
                    sentBy: device.last - store.settings.notDeliveredAfterMs))
        }
    }

    /// The bundle's rows are gone with its savepoint: so are the config bodies it stored.
    func bundleFailed() {
        configBodies.forget()
        blocks.drop(from: currentBlocks)
        manifest = nil
        beginning = nil
        rowInserted = false
        currentDevice = nil
    }
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

/// Blocks kept to be written many to a statement, with the ids reserved for them.
struct PendingBlocks {
    /// Written once they hold this many bytes of compressed data or this many blocks.
    static let bytesPerWrite = 4 << 20
    static let rowsPerWrite = 2_000
    /// Rows to an insert: well under PostgreSQL's limit on bound values.
    private static let rowsPerStatement = 200
    private var rows: [(block: FinishedBlock, id: Int64)] = []

    var count: Int { rows.count }

    mutating func append(_ block: FinishedBlock, id: Int64) { rows.append((block, id)) }

    func bytes(from start: Int) -> Int { rows[start...].reduce(0) { $0 + $1.block.data.count } }

    mutating func drop(from start: Int) { rows.removeSubrange(min(start, rows.count)...) }

    /// Sends the inserts of the blocks from `start` on, and of their index entries, without waiting, and forgets them.
    mutating func write(from start: Int, _ session: PostgresSession) throws {
        let writing = rows[start...]
        guard !writing.isEmpty else { return }
        let dialect = session.dialect
        for first in stride(from: writing.startIndex, to: writing.endIndex, by: Self.rowsPerStatement) {
            let chunk = writing[first..<min(first + Self.rowsPerStatement, writing.endIndex)]
            var values: [SQLValue] = []
            values.reserveCapacity(chunk.count * 6)
            for (block, id) in chunk {
                values += [
                    .integer(id), .integer(block.bundleRef), .integer(Int64(block.lines)), .integer(Int64(block.rawBytes)),
                    .integer(block.dictionary), .bytes(block.data),
                ]
            }
            try session.send(
                rendered: """
                    INSERT INTO record_block (id, bundle_ref, lines, raw_bytes, dictionary, data)
                    VALUES \(dialect.valueLists(columns: 6, rows: chunk.count))
                    """, values)
        }
        var keys: [Int64] = []
        var blockIDs: [Int64] = []
        for (block, id) in writing {
            keys += block.keys
            blockIDs += repeatElement(id, count: block.keys.count)
        }
        if !keys.isEmpty {
            session.send(
                "INSERT INTO notification_block (key, block) SELECT * FROM unnest(\(keys)::bigint[], \(blockIDs)::bigint[]) ON CONFLICT DO NOTHING"
            )
        }
        rows.removeSubrange(start...)
    }
}

/// A device's key, ordered as notification keys are (byte by byte): the order device rows are locked in.
struct DeviceKey: Hashable {
    var appID: String
    var deviceID: String

    var rowKey: NotificationRowKey { NotificationRowKey(appID: appID, notificationID: deviceID) }
}
