import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// Stores one bundle's items inside the caller's transaction: the bundle row, its accepted lines in compressed
/// blocks with the index of the notifications in each, rejected lines with their reasons, config snapshots, the
/// device, and the per-notification summaries.
struct BundleWriter: BundleItemWriter {
    private let db: Database
    private let source: String?
    private let receivedAt: Int64
    /// False when the bundle's facts go to a ``SummaryBacklog`` instead of `notification` before this commit.
    private let summarized: Bool
    private let settings: DiagnosisSettings
    /// What the bundle's items add up to, and its rejected lines.
    var progress = BundleProgress()
    /// The stored bundle's row id (0 until its manifest is stored).
    private(set) var bundleRef: Int64 = 0
    /// The bundle's accepted lines, into blocks.
    private var blocks = BlockBuilder(dictionary: .none)
    /// What blocks and config bodies are compressed against: the app's, once the manifest names it.
    private let dictionaries: AppDictionaries
    private var dictionary = RecordDictionaries.Current.none
    /// The bundle's facts per notification ID, for the group to merge once the bundle is stored.
    var facts: [String: NotificationFacts] { progress.facts }
    private let configBodies: ConfigBodies
    private let clients: Clients

    init(
        db: Database, source: String?, receivedAt: Int64, settings: DiagnosisSettings, configBodies: ConfigBodies,
        clients: Clients, summarized: Bool, dictionaries: AppDictionaries
    ) throws {
        self.configBodies = configBodies
        self.clients = clients
        self.db = db
        self.source = source
        self.receivedAt = receivedAt
        self.summarized = summarized
        self.settings = settings
        self.dictionaries = dictionaries
    }

    /// Bytes of accepted lines stored in blocks so far.
    var storedBytes: Int { blocks.storedBytes }

    mutating func begin(_ manifest: Manifest) throws {
        let appID = manifest.appID!, bundleID = manifest.bundleID!
        let tally = BundleTally(manifest: manifest, receivedAt: receivedAt)
        progress.tally = tally
        if let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT accepted, rejected, clock_offset_ms FROM bundle WHERE app_id = ? AND bundle_id = ?
                    """), arguments: [appID, bundleID])
        {
            progress.duplicateOf = IngestResult(
                appID: appID, bundleID: bundleID, accepted: row[0], rejected: row[1],
                duplicate: true, rejections: [], clockOffsetMs: row[2])
            return
        }
        let client = try clients.reference(
            Clients.Description(
                appVersion: manifest.appVersion, build: manifest.build,
                os: manifest.os, deviceModel: manifest.deviceModel,
                sdk: manifest.sdk), db: db)
        try db.cachedStatement(
            sql: """
                INSERT INTO bundle (app_id, bundle_id, device_id, client_ref, uploaded_at, received_at, clock_offset_ms, source,
                                    summarized)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            appID, bundleID, manifest.isFromServer ? nil : manifest.deviceID, client,
            manifest.uploadedAt, receivedAt, tally.offset, source, summarized,
        ])
        bundleRef = db.lastInsertedRowID
        dictionary = try dictionaries.current(for: appID)
        blocks = BlockBuilder(dictionary: dictionary)
        blocks.bundleRef = bundleRef
    }

    mutating func store(_ decoded: DecodedRecord) throws {
        // Changed in place: a copy would copy the facts of every notification so far, for each line.
        guard progress.tally != nil else { return }
        let manifest = progress.tally!.manifest
        let record = decoded.record
        let (ts, deviceTs) = progress.tally!.accept(decoded)
        let tally = progress.tally!
        try blocks.add(decoded.json, notificationID: decoded.notificationID, appID: manifest.appID!, db: db)
        if record.recordType == .config, let deviceID = tally.deviceID, let ts, let process = record.process {
            let body = try configBodies.reference(decoded.json, appGroup: record.appGroup, dictionary: dictionary, db: db)
            try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO config (app_id, device_id, process, ts, device_ts, body_ref) VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [manifest.appID, deviceID, process, ts, deviceTs, body])
        }
    }

    /// Writes the device and the bundle's counts; the caller merges ``facts`` into the summaries and commits.
    mutating func end(_ tally: BundleTally, device: DeviceSeen?) throws {
        let session = SQLiteSession(db: db)
        if let device {
            let (appID, deviceID, last) = (device.appID, device.deviceID, device.last)
            try session.deviceSeen(
                appID: appID, deviceID: deviceID, firstSeen: device.first, lastSeen: last, manifest: tally.manifest)
            // Silence from this device now means something for the pushes it has not mentioned: settle them again,
            // their counts taken out of the rollups until then.
            let awaiting = try session.rows(
                """
                SELECT notification_id, cause, \(unsafeRaw: NotificationFacts.storedColumnList) FROM notification
                INDEXED BY notification_awaiting
                WHERE app_id = \(appID) AND device_id = \(deviceID) AND cause = 'awaiting_device_logs'
                    AND sent_ts <= \(last - settings.notDeliveredAfterMs)
                """)
            if !awaiting.isEmpty {
                let rollups = RollupDeltas()
                for row in awaiting {
                    let id: String = try row.decode("notification_id")
                    rollups.add(
                        appID: appID, notificationID: id, facts: try NotificationFacts(stored: row),
                        cause: try row.decode("cause"), sign: -1)
                    try session.execute(
                        "UPDATE OR FAIL notification SET cause = NULL WHERE app_id = \(appID) AND notification_id = \(id)")
                }
                try rollups.write(db)
            }
        }
        try blocks.flush(db)
        try session.storeRejectedLines(progress.rejectedLines, bundleRef: bundleRef)
        let spans = tally.spans
        try db.cachedStatement(
            sql: """
                UPDATE bundle SET accepted = ?, rejected = ?, first_block = ?, last_block = ?,
                    ts_from = ?, ts_to = ?, config_ts_from = ?, config_ts_to = ?
                WHERE id = ?
                """
        ).execute(arguments: [
            tally.accepted, tally.rejected, blocks.first, blocks.last, spans.lines?.from, spans.lines?.to,
            spans.configFrom, spans.configTo, bundleRef,
        ])
    }
}
