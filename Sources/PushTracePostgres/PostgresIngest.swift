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
                    try PostgresSummaryWriter.merge(group.summaries, devices: group.devices, session)
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

/// Bundles being stored in one transaction of a PostgreSQL store.
final class PostgresGroup: IngestGroup {
    let session: PostgresSession
    let store: PostgresStore
    /// The facts of the bundles stored so far, merged into the summaries before the group commits.
    let summaries = PendingSummaries()
    /// The devices whose uploads may unsettle pushes that waited for them, handled with the summaries.
    var devices: Set<AwaitingDevice> = []
    /// Config bodies met by this group: digest → (row id, line, App Group).
    private var configBodies: [Int64: [(id: Int64, line: String, appGroup: String?)]] = [:]

    init(session: PostgresSession, store: PostgresStore) {
        self.session = session
        self.store = store
    }

    func ingest(
        source: String?, receivedAt: Int64,
        _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void
    ) throws -> IngestResult {
        var writer = PostgresBundleWriter(group: self, source: source, receivedAt: receivedAt)
        let result: IngestResult
        do {
            result = try session.savepoint {
                try produce { item in try writer.add(item) }
                return try writer.finish()
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState]?.hasPrefix("22") == true {
            // A value PostgreSQL cannot hold (data exception): this bundle is refused, the group goes on.
            configBodies.removeAll()
            throw BundleError(
                .undecodable,
                "the bundle holds a value the database cannot store "
                    + "(PostgreSQL \(error.serverInfo?[.sqlState] ?? ""))")
        } catch {
            // The bundle's rows are gone with its savepoint: so are the config bodies it stored.
            configBodies.removeAll()
            throw error
        }
        if !result.duplicate {
            try store.dictionaries.trainIfDue(appID: result.appID, added: writer.storedBytes, session)
            summaries.merge(appID: result.appID, writer.facts)
            if let device = writer.awaitingDevice { devices.insert(device) }
        }
        return result
    }

    /// The id of the config body holding `line` (with its App Group), stored now when there is none. Found again by
    /// the 64-bit FNV-1a digest of the line and taken only when the stored line is the same, byte for byte.
    func configBody(_ line: String, appGroup: String?, dictionary: BlockDictionary) throws -> Int64 {
        let digest = ConfigBodyDigest.of(line)
        if let id = configBodies[digest]?.first(where: { $0.line.utf8.elementsEqual(line.utf8) && $0.appGroup == appGroup })?.id {
            return id
        }
        // Locked against retention, which deletes bodies no committed config row refers to (this one's is not yet).
        for row in try session.query("SELECT id, app_group, body FROM config_body WHERE digest = \(digest) FOR KEY SHARE") {
            let (id, group, body) = try row.decode((Int64, String?, ByteBuffer).self)
            guard group == appGroup else { continue }
            if try store.configText(body, session).utf8.elementsEqual(line.utf8) {
                remember(digest, id, line, appGroup)
                return id
            }
        }
        let body = ByteBuffer(bytes: ConfigBody.compressed(line, dictionary: dictionary))
        let id = try session.query(
            """
            INSERT INTO config_body (digest, app_group, body) VALUES (\(digest), \(appGroup), \(body)) RETURNING id
            """
        ).first(where: { _ in true })!.decode(Int64.self)
        remember(digest, id, line, appGroup)
        return id
    }

    private func remember(_ digest: Int64, _ id: Int64, _ line: String, _ appGroup: String?) {
        if configBodies.count >= 50_000 { configBodies.removeAll(keepingCapacity: true) }
        configBodies[digest, default: []].append((id, line, appGroup))
    }
}

/// Stores one bundle's items inside its group's transaction: the bundle row, its accepted lines in compressed blocks
/// with the index of the notifications in each, rejected lines with their reasons, config records, the device, and
/// the bundle's facts per notification for the group to merge.
struct PostgresBundleWriter: BundleItemWriter {
    private let group: PostgresGroup
    private let source: String?
    private let receivedAt: Int64
    private var session: PostgresSession { group.session }
    /// What the bundle's items add up to, and its rejected lines.
    var progress = BundleProgress()
    private var bundleRef: Int64 = 0
    private var blocks = BlockBuilder(dictionary: .none)
    private var dictionary = BlockDictionary.none
    /// The device this bundle heard from, whose waiting pushes are to be settled again.
    private(set) var awaitingDevice: AwaitingDevice?

    init(group: PostgresGroup, source: String?, receivedAt: Int64) {
        self.group = group
        self.source = source
        self.receivedAt = receivedAt
    }

    var storedBytes: Int { blocks.storedBytes }
    /// The bundle's facts per notification ID, for the group to merge once the bundle is stored.
    var facts: [String: NotificationFacts] { progress.facts }

    mutating func begin(_ manifest: Manifest) throws {
        let appID = manifest.appID!, bundleID = manifest.bundleID!
        let tally = BundleTally(manifest: manifest, receivedAt: receivedAt)
        progress.tally = tally
        // The same bundle sent to two servers at once: the second insert waits for the first transaction and, once
        // it commits, inserts nothing; that bundle is then a duplicate here.
        if let row = try session.query(
            """
            INSERT INTO bundle (app_id, bundle_id, device_id, app_version, build, os, device_model, sdk, uploaded_at,
                                received_at, clock_offset_ms, source)
            VALUES (\(appID), \(bundleID), \(tally.deviceID), \(manifest.appVersion), \(manifest.build), \(manifest.os),
                    \(manifest.deviceModel), \(manifest.sdk), \(manifest.uploadedAt), \(receivedAt), \(tally.offset), \(source))
            ON CONFLICT (app_id, bundle_id) DO NOTHING RETURNING id
            """
        ).first(where: { _ in true }) {
            bundleRef = try row.decode(Int64.self)
        } else {
            let row = try session.query(
                """
                SELECT accepted, rejected, clock_offset_ms FROM bundle WHERE app_id = \(appID) AND bundle_id = \(bundleID)
                """
            ).first(where: { _ in true })!
            let (accepted, rejected, offset) = try row.decode((Int64, Int64, Int64).self)
            progress.duplicateOf = IngestResult(
                appID: appID, bundleID: bundleID, accepted: Int(accepted), rejected: Int(rejected),
                duplicate: true, rejections: [], clockOffsetMs: offset)
            return
        }
        dictionary = try group.store.dictionaries.current(for: appID, session)
        blocks = BlockBuilder(dictionary: dictionary)
        blocks.bundleRef = bundleRef
    }

    mutating func store(_ decoded: DecodedRecord) throws {
        // Changed in place: a copy would copy the facts of every notification so far, for each line.
        guard progress.tally != nil else { return }
        let appID = progress.tally!.manifest.appID!
        let record = decoded.record
        let (ts, deviceTs) = progress.tally!.accept(decoded)
        let tally = progress.tally!
        let session = self.session
        try blocks.add(decoded.json, notificationID: decoded.notificationID, appID: appID) { try Self.insert($0, session) }
        if record.recordType == .config, let deviceID = tally.deviceID, let ts, let process = record.process {
            let body = try group.configBody(decoded.json, appGroup: record.appGroup, dictionary: dictionary)
            try session.query(
                """
                INSERT INTO config (app_id, device_id, process, ts, device_ts, body_ref)
                VALUES (\(appID), \(deviceID), \(process), \(ts), \(deviceTs), \(body))
                ON CONFLICT DO NOTHING
                """)
        }
    }

    /// Stores a block and its index entries; returns its id.
    private static func insert(_ block: FinishedBlock, _ session: PostgresSession) throws -> Int64 {
        let id = try session.query(
            """
            INSERT INTO record_block (bundle_ref, lines, raw_bytes, dictionary, data)
            VALUES (\(block.bundleRef), \(Int64(block.lines)), \(Int64(block.rawBytes)), \(block.dictionary), \(ByteBuffer(bytes: block.data)))
            RETURNING id
            """
        ).first(where: { _ in true })!.decode(Int64.self)
        if !block.keys.isEmpty {
            try session.query(
                """
                INSERT INTO notification_block (key, block) SELECT unnest(\(block.keys)::bigint[]), \(id) ON CONFLICT DO NOTHING
                """)
        }
        return id
    }

    /// Writes the device and the bundle's counts; the group merges ``facts`` into the summaries.
    mutating func end(_ tally: BundleTally, device: DeviceSeen?) throws {
        if let device {
            try session.deviceSeen(
                appID: device.appID, deviceID: device.deviceID, firstSeen: device.first, lastSeen: device.last,
                manifest: tally.manifest)
            // Silence from this device now means something for the pushes it has not mentioned: they are settled
            // again (with the group's summaries, under their row locks).
            awaitingDevice = AwaitingDevice(
                appID: device.appID, deviceID: device.deviceID, sentBy: device.last - group.store.settings.notDeliveredAfterMs)
        }
        let session = self.session
        try blocks.flush { try Self.insert($0, session) }
        try session.storeRejectedLines(progress.rejectedLines, bundleRef: bundleRef)
        let spans = tally.spans
        try session.query(
            """
            UPDATE bundle SET accepted = \(Int64(tally.accepted)), rejected = \(Int64(tally.rejected)),
                ts_from = \(spans.lines?.from), ts_to = \(spans.lines?.to), config_ts_from = \(spans.configFrom),
                config_ts_to = \(spans.configTo)
            WHERE id = \(bundleRef)
            """)
    }
}
