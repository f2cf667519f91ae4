import Foundation
import PushTraceCore
import PushTraceRecords

/// One stored line read back from its block, with what is derived from it and its bundle.
package struct StoredLine {
    /// The line exactly as received.
    package var body: String
    package var record: Record
    /// The notification ID in its stored form, when the record has one.
    package var notificationID: String?
    /// The line's time corrected by its bundle's clock offset (what the store orders and filters by).
    package var ts: Int64?
    /// The device's own time, when the correction changed it.
    package var deviceTs: Int64?
    /// The uploading device; nil for the backend's bundles.
    package var deviceID: String?
    package var appID: String
    /// The block's id and the line's place in it: the order lines were stored in.
    package var block: Int64
    package var index: Int
}

/// A `record_block` row with what its bundle says of every line in it: all that reading its lines needs, whichever
/// engine read the row.
package struct StoredBlockRow {
    package var id: Int64
    package var lines: Int
    package var rawBytes: Int
    package var data: [UInt8]
    package var appID: String
    package var deviceID: String?
    package var clockOffsetMs: Int64

    package init(id: Int64, lines: Int, rawBytes: Int, data: [UInt8], appID: String, deviceID: String?, clockOffsetMs: Int64) {
        self.id = id
        self.lines = lines
        self.rawBytes = rawBytes
        self.data = data
        self.appID = appID
        self.deviceID = deviceID
        self.clockOffsetMs = clockOffsetMs
    }
}

extension StoredRecord {
    /// A stored record body read back (``record(storedBody:)``); a body that is not a JSON object is a damaged store.
    package static func readRecord(storedBody body: inout String) throws -> Record {
        guard let record = record(storedBody: &body) else { throw StoreError.notAnObject }
        return record
    }
}

/// Reads record blocks back as ``StoredLine``s, in every engine. Used by one thread at a time.
package final class StoredLineReader {
    /// A dictionary's bytes by its Adler-32, as blocks name it; nil when the store has no such dictionary.
    private let dictionary: (UInt32) -> [UInt8]?
    /// The last blocks decoded: a device's notifications share its bundles' blocks, and causes are settled device by
    /// device (and a backend's block of `push.sent` lines holds many notifications).
    private var recent: [Int64: DecodedBlock] = [:]
    private var order: [Int64] = []
    private static let capacity = 128
    /// The most blocks read for one notification, and the most bytes of them (decompressed): a notification named
    /// by more is read up to there and its timeline marked as cut (``TimelineCut``).
    package static let blockLimit = 2_000
    package static let byteLimit = 64 << 20
    /// Set by ``lines(appID:notificationID:blocks:)`` when it stopped at a limit; nil when it read every block.
    package private(set) var cut: TimelineCut?

    package init(dictionary: @escaping (UInt32) -> [UInt8]?) {
        self.dictionary = dictionary
    }

    /// The lines of a block, decompressed.
    package func decode(_ row: StoredBlockRow) throws -> [String] {
        try RecordBlock.decode(row.data, lines: row.lines, rawBytes: row.rawBytes, dictionaries: dictionary)
    }

    /// The block's lines, each with its corrected time and nothing else read from it: what an export needs.
    package func forEachLineTime(of row: StoredBlockRow, _ body: (_ line: String, _ correctedTs: Int64?) throws -> Void) throws {
        for var text in try decode(row) {
            guard let ts = StoredRecord.timestamp(storedBody: &text) else { throw StoreError.notAnObject }
            try body(text, ts.map { ClockCorrection.corrected($0, by: row.clockOffsetMs) })
        }
    }

    /// The block's lines. With `mentioning` (a notification ID, folded by ``BlockMentions/folded(_:)``), only the
    /// lines that may be that notification's are parsed; the caller still checks each line's parsed ID.
    package func forEachLine(of row: StoredBlockRow, mentioning: [UInt8]? = nil, _ body: (StoredLine) throws -> Void) throws {
        let decoded: DecodedBlock
        if let known = recent[row.id] {
            decoded = known
        } else {
            decoded = DecodedBlock(try decode(row))
            if order.count == Self.capacity { recent[order.removeFirst()] = nil }
            order.append(row.id)
            recent[row.id] = decoded
        }
        let texts = decoded.lines
        let offset = row.clockOffsetMs
        let indices = mentioning.map { decoded.mentions.lines(mentioning: $0) } ?? Array(texts.indices)
        for index in indices {
            var text = texts[index]
            let record = try StoredRecord.readRecord(storedBody: &text)
            try body(
                StoredLine(
                    body: text, record: record, notificationID: record.notificationID.map(NotificationKey.normalize),
                    ts: record.ts.map { ClockCorrection.corrected($0, by: offset) },
                    deviceTs: offset != 0 ? record.ts : nil, deviceID: row.deviceID, appID: row.appID,
                    block: row.id, index: index))
        }
    }

    /// The lines of one app's notification found in `blocks` (the blocks its index key names, in the order stored),
    /// in the order they were stored. A line can only be this notification's if its ID is in it (a line with an
    /// escape is parsed anyway: its ID may be spelled with one); the parsed ID is compared byte for byte, as the
    /// index key was computed (not Unicode equivalence).
    package func lines(
        appID: String, notificationID: String,
        blocks: (_ each: (StoredBlockRow) throws -> Void) async throws -> Void
    ) async throws -> [StoredLine] {
        var found: [StoredLine] = []
        let folded = BlockMentions.folded(Array(notificationID.utf8))
        var blocksRead = 0, bytesRead = 0, stopped = false
        try await blocks { row in
            guard row.appID == appID, !stopped else { return }
            guard blocksRead < Self.blockLimit, blocksRead == 0 || bytesRead + row.rawBytes <= Self.byteLimit else {
                stopped = true
                return
            }
            blocksRead += 1
            bytesRead += row.rawBytes
            try forEachLine(of: row, mentioning: folded) { line in
                if line.notificationID?.utf8.elementsEqual(notificationID.utf8) == true { found.append(line) }
            }
        }
        cut = stopped ? TimelineCut(blocksRead: blocksRead, through: found.compactMap(\.ts).max()) : nil
        return found
    }
}

/// A stored config record: its time, and its entry, decoded the first time a diagnosis takes it. One reader's, used
/// by one thread at a time.
package final class StoredConfig {
    package let ts: Int64
    private var decode: (() throws -> TimelineEntry)?
    private var decoded: TimelineEntry?

    package init(ts: Int64, decode: @escaping () throws -> TimelineEntry) {
        self.ts = ts
        self.decode = decode
    }

    package func entry() throws -> TimelineEntry {
        if let decoded { return decoded }
        let entry = try decode!()
        decoded = entry
        decode = nil
        return entry
    }
}

/// The config in force of one device and process, with the span of times it is in force for: from its own time
/// (or the beginning, when there is none) until the device's next config record of that process (or for ever).
package struct ConfigSpan {
    package var config: StoredConfig?
    package var from: Int64
    package var until: Int64

    package init(config: StoredConfig?, next: Int64?) {
        self.config = config
        self.from = config?.ts ?? .min
        self.until = next ?? .max
    }
}

/// A reader's memo of the config in force per device and process: a device's notifications mostly fall in one span,
/// so settling them asks the store once per span, and only for the record in force and the next one's time.
/// One reader's, used by one thread at a time.
package final class ConfigSpans {
    private var spans: [[String]: ConfigSpan] = [:]

    package init() {}

    /// The config of `process` in force at `at`, from the memo or from `fetch` (the record at or before `at`, and the
    /// time of the next one).
    package func config(
        appID: String, deviceID: String, process: ProcessKind, at: Int64, fetch: () throws -> ConfigSpan
    ) throws -> StoredConfig? {
        if let span = span(appID: appID, deviceID: deviceID, process: process, at: at) { return span.config }
        let span = try fetch()
        remember(span, appID: appID, deviceID: deviceID, process: process)
        return span.config
    }

    /// The memo's span of `process` that holds `at`, if it has one.
    package func span(appID: String, deviceID: String, process: ProcessKind, at: Int64) -> ConfigSpan? {
        guard let span = spans[[appID, deviceID, process.rawValue]], span.from <= at, at < span.until else { return nil }
        return span
    }

    package func remember(_ span: ConfigSpan, appID: String, deviceID: String, process: ProcessKind) {
        if spans.count >= 10_000 { spans.removeAll(keepingCapacity: true) }
        spans[[appID, deviceID, process.rawValue]] = span
    }
}

/// Assembling what diagnosis needs from stored lines and config records, the same in every engine.
package enum DiagnosisAssembly {
    /// The notification's records of one type (`event`, `log`), ordered as the store always has: by corrected time
    /// (none first), then as stored.
    package static func entries(_ lines: [StoredLine], type: String) -> [TimelineEntry] {
        lines.filter { $0.record.type == type }
            .sorted { ($0.ts ?? .min, $0.block, $0.index) < ($1.ts ?? .min, $1.block, $1.index) }
            .map { TimelineEntry(ts: $0.ts ?? 0, deviceTs: $0.deviceTs, deviceID: $0.deviceID, record: $0.record, json: $0.body) }
    }

    /// The processes that record config (docs/protocol.md#config-records): what ``input(appID:notificationID:lines:cut:configs:lastSeen:)``
    /// asks the config in force of.
    package static let configuredProcesses: [ProcessKind] = [.app, .service, .content]

    /// The diagnosis input of one notification from its stored lines: the config in force is the latest of each
    /// process at or before its first event (`configs` fetches those, and only those: a device may have recorded
    /// any number); `lastSeen` is its device's latest upload.
    package static func input(
        appID: String, notificationID: String, lines: [StoredLine], cut: TimelineCut? = nil,
        configs: (_ deviceID: String, _ at: Int64) async throws -> [ProcessKind: StoredConfig],
        lastSeen: (_ deviceID: String) async throws -> Int64?,
        neighbours: (_ deviceID: String, _ sentAfter: Int64) async throws -> DeviceNeighbours
    ) async throws -> DiagnosisInput {
        let entries = entries(lines, type: "event")
        let deviceID =
            entries.first(where: { $0.deviceID != nil })?.deviceID
            ?? entries.first(where: { $0.event == .pushSent })?.record.deviceID
        var config = ConfigInForce()
        var seen: Int64?
        var settings: SettingsInForce?
        if let deviceID, let first = entries.first?.ts {
            config = try configInForce(await configs(deviceID, first))
            seen = try await lastSeen(deviceID)
            settings = try await settingsInForce(config, deviceID: deviceID, configs: configs)
        }
        // APNs's rules read the device's other notifications: asked only of a push with an expiration that the device
        // never recorded though it uploaded later, and of one with a collapse ID the user never expanded.
        var nearby: DeviceNeighbours?
        if let sent = entries.first(where: { $0.event == .pushSent }), let deviceID {
            let deviceEntries = entries.filter { $0.process != .server }
            let unrecorded =
                deviceEntries.isEmpty && sent.record.deviceID != nil && sent.record.expiration != nil && (seen ?? .min) > sent.ts
            let collapsible =
                !deviceEntries.isEmpty && sent.record.collapseID != nil
                && !entries.contains { $0.event == .contentReceived || $0.event == .contentAction }
            if unrecorded || collapsible { nearby = try await neighbours(deviceID, sent.ts) }
        }
        return DiagnosisInput(
            appID: appID, notificationID: notificationID, entries: entries, config: config,
            deviceLastSeen: seen, timelineCut: cut, settings: settings, neighbours: nearby)
    }

    /// The settings in force among `config`; when they say nothing can be shown, with the first of the device's
    /// earlier settings records that said so for the same reason, found by stepping back through the configs in
    /// force (at most ``settingsSteps`` records back).
    static func settingsInForce(
        _ config: ConfigInForce, deviceID: String,
        configs: (_ deviceID: String, _ at: Int64) async throws -> [ProcessKind: StoredConfig]
    ) async throws -> SettingsInForce? {
        guard var inForce = SettingsInForce(config), let reason = inForce.settings.nothingShown else {
            return SettingsInForce(config)
        }
        var since = inForce.entry
        for _ in 0..<settingsSteps {
            guard since.ts > WireBounds.epochMilliseconds.lowerBound,
                let earlier = SettingsInForce(try configInForce(await configs(deviceID, since.ts - 1))),
                earlier.settings.nothingShown == reason
            else { break }
            since = earlier.entry
        }
        inForce.disabledSince = since
        return inForce
    }

    /// How many earlier settings records "since when" looks back through.
    static let settingsSteps = 50

    /// The config records found in force, as diagnosis takes them.
    package static func configInForce(_ found: [ProcessKind: StoredConfig]) throws -> ConfigInForce {
        ConfigInForce(app: try found[.app]?.entry(), service: try found[.service]?.entry(), content: try found[.content]?.entry())
    }

    /// A stored config record read back as a timeline entry.
    package static func configEntry(ts: Int64?, deviceTs: Int64?, deviceID: String?, body: String) throws -> TimelineEntry {
        var body = body
        let record = try StoredRecord.readRecord(storedBody: &body)
        return TimelineEntry(ts: ts ?? 0, deviceTs: deviceTs, deviceID: deviceID, record: record, json: body)
    }
}
