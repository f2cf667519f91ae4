import PushTraceCore
import PushTraceRecords

/// Stores one bundle's items inside its group's transaction, the same for every engine: the bundle row, its
/// accepted lines in compressed blocks with the index of the notifications in each, rejected lines with their
/// reasons, config records (their bodies kept once, ``ConfigBodies``), the device, and the bundle's facts per
/// notification for the group to merge. What differs by engine is asked of ``BundleRows``.
package struct BundleWriter<Rows: BundleRows> {
    private let rows: Rows
    private let source: String?
    private let receivedAt: Int64
    /// What the bundle's items add up to, and its rejected lines.
    package private(set) var progress = BundleProgress()
    /// The stored bundle's row id (0 until its manifest is stored).
    package private(set) var bundleRef: Int64 = 0
    /// The device the bundle came from, once it has ended (none for the backend's).
    package private(set) var device: DeviceSeen?
    private var blocks = BlockBuilder(dictionary: .none)
    /// What blocks and config bodies are compressed against: the app's, once the manifest names it.
    private var dictionary = BlockDictionary.none
    /// Whether the bundle stored an app config record carrying notification settings, which the device's row sums up.
    private var storedSettings = false
    /// Config records waiting for their bodies' row ids, found for several at once (``ConfigBodies``).
    private var pendingConfigs: [PendingConfig] = []
    /// How many config records wait at most: a bundle holds a few, a hostile one any number.
    private static var pendingConfigLimit: Int { 32 }
    /// Config records whose insert needs no answer, written several to a statement where the dialect says so.
    private var configs = UpsertBatch { rows in
        """
        INSERT INTO config (app_id, device_id, process, ts, device_ts, body_ref, settings)
        VALUES \(rows.dialect.valueLists(columns: 7, rows: rows.count)) ON CONFLICT DO NOTHING
        """
    }

    package init(rows: Rows, source: String?, receivedAt: Int64) {
        self.rows = rows
        self.source = source
        self.receivedAt = receivedAt
    }

    /// Bytes of accepted lines stored in blocks so far.
    package var storedBytes: Int { blocks.storedBytes }

    /// Hands `item` to the bundle's beginning or to its lines, or counts it rejected.
    package mutating func add(_ item: BundleItem) throws {
        guard !progress.isDuplicate else { return }
        switch item {
        case .manifest(let manifest): try begin(manifest)
        case .record(let decoded): try store(decoded)
        case .rejected(let line): progress.reject(line)
        }
    }

    /// Ends the bundle and answers it; a duplicate answers as it was stored before.
    package mutating func finish() throws -> IngestResult {
        guard let tally = progress.tally else { throw BundleError(.undecodable, "the bundle has no manifest") }
        if let duplicateOf = progress.duplicateOf { return duplicateOf }
        if let deviceID = tally.deviceID, let first = tally.deviceFirstSeen, let last = tally.deviceLastSeen {
            device = DeviceSeen(appID: tally.manifest.appID!, deviceID: deviceID, first: first, last: last)
        }
        try end(tally)
        return tally.result
    }

    /// Stores the bundle's row, or finds it stored before (``BundleProgress/duplicateOf``).
    private mutating func begin(_ manifest: Manifest) throws {
        let appID = manifest.appID!
        let tally = BundleTally(manifest: manifest, receivedAt: receivedAt)
        progress.tally = tally
        guard let ref = try rows.insertBundle(manifest, tally: tally, source: source, receivedAt: receivedAt) else {
            _ = try storedBefore()
            return
        }
        bundleRef = ref
        dictionary = try rows.dictionary(for: appID)
        blocks = BlockBuilder(dictionary: dictionary)
        blocks.bundleRef = ref
    }

    /// The answer of a bundle whose row was stored before (by an earlier upload, or another server's transaction
    /// that has committed): as that one was stored.
    package mutating func storedBefore() throws -> IngestResult {
        guard let manifest = progress.tally?.manifest, let appID = manifest.appID, let bundleID = manifest.bundleID else {
            throw BundleError(.undecodable, "the bundle has no manifest")
        }
        let row = try rows.session.rows(
            "SELECT accepted, rejected, clock_offset_ms FROM bundle WHERE app_id = \(appID) AND bundle_id = \(bundleID)")
        guard let row = row.first else { throw StoreError.noRow("the bundle stored before") }
        let result = IngestResult(
            appID: appID, bundleID: bundleID, accepted: try row.decode("accepted"), rejected: try row.decode("rejected"),
            duplicate: true, rejections: [], clockOffsetMs: try row.decode("clock_offset_ms"))
        progress.duplicateOf = result
        return result
    }

    /// Stores an accepted line.
    private mutating func store(_ decoded: DecodedRecord) throws {
        // Changed in place: a copy would copy the facts of every notification so far, for each line.
        guard progress.tally != nil else { return }
        let appID = progress.tally!.manifest.appID!
        let (ts, deviceTs) = progress.tally!.accept(decoded)
        let rows = self.rows
        try blocks.add(decoded.json, notificationID: decoded.notificationID, appID: appID) { try rows.storeBlock($0) }
        let record = decoded.record
        if record.recordType == .config, let deviceID = progress.tally!.deviceID, let ts, let process = record.process {
            pendingConfigs.append(
                PendingConfig(
                    line: decoded.json, appGroup: record.appGroup, appID: appID, deviceID: deviceID, process: process, ts: ts,
                    deviceTs: deviceTs, settings: SettingsSummary(record.notificationSettings)))
            if pendingConfigs.count >= Self.pendingConfigLimit { try storePendingConfigs() }
        }
    }

    /// Stores the config records waiting, in the order received, their bodies found or stored first.
    private mutating func storePendingConfigs() throws {
        guard !pendingConfigs.isEmpty else { return }
        let bodies = try rows.configBodies.references(
            pendingConfigs.map { ($0.line, $0.appGroup) }, dictionary: dictionary, rows: rows)
        for (config, body) in zip(pendingConfigs, bodies) {
            let values: [SQLValue] = [
                .text(config.appID), .text(config.deviceID), .text(config.process), .integer(config.ts),
                config.deviceTs.sqlValue, .integer(body), .integer(config.settings.rawValue),
            ]
            // A repeat of a stored record (every upload repeats them) changes nothing: only an app record that
            // carries settings waits to learn whether it was new, after the records before it.
            if config.process == ProcessKind.app.rawValue, !config.settings.isEmpty {
                try configs.flush(to: rows.session)
                let one = UpsertBatch.Shape(dialect: rows.session.dialect, count: 1)
                if try rows.session.execute(rendered: configs.text(one), values) > 0 { storedSettings = true }
            } else {
                try configs.add(values, to: rows.session)
            }
        }
        pendingConfigs.removeAll(keepingCapacity: true)
    }

    /// Writes what ends a bundle stored now: the device, its last block, its rejected lines and its counts.
    private mutating func end(_ tally: BundleTally) throws {
        try storePendingConfigs()
        try configs.flush(to: rows.session)
        if let device {
            let manifest = tally.manifest
            try rows.deviceSeen(
                DeviceVisit(
                    appID: device.appID, deviceID: device.deviceID, first: device.first, last: device.last,
                    appVersion: manifest.appVersion, os: manifest.os, deviceModel: manifest.deviceModel),
                settingsChanged: storedSettings)
            try rows.heardFrom(device)
        }
        let rows = self.rows
        try blocks.flush { try rows.storeBlock($0) }
        try rows.bundleEnded(
            ref: bundleRef, tally: tally, source: source, receivedAt: receivedAt, firstBlock: blocks.first, lastBlock: blocks.last)
        try rows.session.storeRejectedLines(progress.rejectedLines, bundleRef: bundleRef)
    }
}

/// A config record accepted, waiting for its body's row id.
private struct PendingConfig {
    var line: String
    var appGroup: String?
    var appID: String
    var deviceID: String
    var process: String
    var ts: Int64
    var deviceTs: Int64?
    var settings: SettingsSummary
}
