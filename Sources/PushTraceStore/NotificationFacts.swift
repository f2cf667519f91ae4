import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords

/// The per-notification summary row, accumulated over one bundle and merged into `notification` at its end, so
/// that searches and reports read one row per notification and never rescan records.
struct NotificationFacts {
    var deviceID: String?
    var deviceIDFromDevice = false
    var category: String?
    var categoryFromPush = false
    var appVersion: String?
    var os: String?
    var firstTs: Int64?
    var lastTs: Int64?
    var sentTs: Int64?
    var apnsStatus: Int64?
    var hasAlert: Bool?
    var mutableContent: Bool?
    var serviceReceived = false
    var serviceDelivered = false
    var serviceExpired = false
    var serviceMs: Int64?
    var serviceCrashed = false
    var contentReceived = false
    var contentCrashed = false
    var actions = 0
    var appResponses = 0
    var records = 0
    var downloads = 0
    var downloadBytes: Int64?
    var attachmentFailure: String?
    /// The content extension's actions, stored in `notification_action` for the reports.
    var actionRows: [(ts: Int64?, action: String?, response: String?)] = []

    mutating func add(_ record: PushTraceRecords.Record, ts: Int64?, manifest: Manifest) {
        records += 1
        if let ts {
            firstTs = min(firstTs ?? ts, ts)
            lastTs = max(lastTs ?? ts, ts)
        }
        if !manifest.isFromServer {
            deviceID = manifest.deviceID
            deviceIDFromDevice = true
            appVersion = manifest.appVersion ?? appVersion
            os = manifest.os ?? os
        }
        guard record.recordType == .event, let event = record.eventName else { return }
        switch event {
        case .pushSent:
            sentTs = ts
            hasAlert = record.hasAlert
            mutableContent = record.mutableContent
            if let category = record.category { self.category = category; categoryFromPush = true }
            if !deviceIDFromDevice { deviceID = record.deviceID ?? deviceID }
        case .pushAPNsResponse:
            apnsStatus = record.status
        case .serviceReceived, .contentReceived:
            if event == .serviceReceived { serviceReceived = true } else { contentReceived = true }
            if !categoryFromPush, category == nil { category = record.category }
        case .serviceDelivered:
            serviceDelivered = true
            if !serviceExpired { serviceMs = record.elapsedMs }
        case .serviceExpired:
            serviceExpired = true
            serviceMs = record.elapsedMs
        case .serviceAbnormalExit: serviceCrashed = true
        case .contentAbnormalExit: contentCrashed = true
        case .contentAction:
            actions += 1
            actionRows.append((ts, record.action, record.response))
        case .appResponse: appResponses += 1
        case .serviceDownload:
            downloads += 1
            if let bytes = record.bytes { downloadBytes = Self.sum(downloadBytes ?? 0, bytes) }
            attachmentFailure = attachmentFailure ?? Self.failureReason(record)
        case .serviceAttachment:
            attachmentFailure = attachmentFailure ?? Self.failureReason(record)
        default: break
        }
    }

    /// Folds in the facts of a later bundle: a group commit merges its bundles' facts in memory, and then into the
    /// stored summary, the same way.
    mutating func merge(_ later: NotificationFacts) {
        deviceID = later.deviceIDFromDevice ? later.deviceID : (deviceID ?? later.deviceID)
        deviceIDFromDevice = deviceIDFromDevice || later.deviceIDFromDevice
        category = later.categoryFromPush ? later.category : (category ?? later.category)
        categoryFromPush = categoryFromPush || later.categoryFromPush
        appVersion = later.appVersion ?? appVersion
        os = later.os ?? os
        if let ts = later.firstTs { firstTs = min(firstTs ?? ts, ts) }
        if let ts = later.lastTs { lastTs = max(lastTs ?? ts, ts) }
        sentTs = sentTs ?? later.sentTs
        apnsStatus = later.apnsStatus ?? apnsStatus
        hasAlert = later.hasAlert ?? hasAlert
        mutableContent = later.mutableContent ?? mutableContent
        serviceReceived = serviceReceived || later.serviceReceived
        serviceDelivered = serviceDelivered || later.serviceDelivered
        serviceMs = later.serviceExpired ? later.serviceMs : serviceExpired ? serviceMs : (later.serviceMs ?? serviceMs)
        serviceExpired = serviceExpired || later.serviceExpired
        serviceCrashed = serviceCrashed || later.serviceCrashed
        contentReceived = contentReceived || later.contentReceived
        contentCrashed = contentCrashed || later.contentCrashed
        actions += later.actions
        appResponses += later.appResponses
        records += later.records
        downloads += later.downloads
        downloadBytes = later.downloadBytes.map { Self.sum(downloadBytes ?? 0, $0) } ?? downloadBytes
        attachmentFailure = attachmentFailure ?? later.attachmentFailure
        actionRows += later.actionRows
    }

    /// Why a download or an attachment failed, in the words the report groups failures by.
    static func failureReason(_ record: PushTraceRecords.Record) -> String? {
        if let error = record.error { return error }
        if record.eventName == .serviceDownload, let status = record.httpStatus, status >= 400 { return "HTTP \(status)" }
        if record.eventName == .serviceAttachment, record.ok == false { return "attachment refused" }
        if let bytes = record.bytes, let kind = AttachmentKind(uti: record.uti, mime: record.mime), bytes > kind.maxBytes {
            return "\(kind.rawValue) over \(kind.limitText)"
        }
        return nil
    }

    /// The `notification` columns a summary is read from and written to, in ``init(stored:)`` order, `cause` last.
    static let columns = """
        device_id, category, app_version, os, first_ts, last_ts, sent_ts, apns_status, has_alert, mutable_content, \
        service_received, service_delivered, service_expired, service_ms, service_crashed, content_received, \
        content_crashed, actions, app_responses, records, device_reached, downloads, download_bytes, attachment_failure, cause
        """

    init() {}

    /// A stored summary, read from ``columns`` starting at `offset`.
    init(stored row: Row, at offset: Int = 0) {
        deviceID = row[offset]
        category = row[offset + 1]
        appVersion = row[offset + 2]
        os = row[offset + 3]
        firstTs = row[offset + 4]
        lastTs = row[offset + 5]
        sentTs = row[offset + 6]
        apnsStatus = row[offset + 7]
        hasAlert = row[offset + 8]
        mutableContent = row[offset + 9]
        serviceReceived = row[offset + 10]
        serviceDelivered = row[offset + 11]
        serviceExpired = row[offset + 12]
        serviceMs = row[offset + 13]
        serviceCrashed = row[offset + 14]
        contentReceived = row[offset + 15]
        contentCrashed = row[offset + 16]
        actions = row[offset + 17]
        appResponses = row[offset + 18]
        records = row[offset + 19]
        deviceIDFromDevice = row[offset + 20]
        downloads = row[offset + 21]
        downloadBytes = row[offset + 22]
        attachmentFailure = row[offset + 23]
    }

    /// Writes these facts as the notification's summary, with `cause` (nil: to be settled). Every column is written
    /// as it is: what a summary holds is decided by ``add(_:ts:manifest:)`` and ``merge(_:)`` alone.
    func write(_ db: Database, appID: String, notificationID: String, cause: String?) throws {
        let statement = try db.cachedStatement(sql: Self.writeSQL)
        statement.setUncheckedArguments([
            appID, notificationID, deviceID, category, appVersion, os, firstTs, lastTs, sentTs, apnsStatus,
            hasAlert, mutableContent, serviceReceived, serviceDelivered, serviceExpired, serviceMs, serviceCrashed,
            contentReceived, contentCrashed, actions, appResponses, records, deviceIDFromDevice, downloads, downloadBytes,
            attachmentFailure, cause,
        ])
        try statement.execute()
    }

    /// `OR FAIL`: a constraint error ends the bundle (whose savepoint is then rolled back) rather than this statement
    /// alone, so SQLite keeps no statement journal for it.
    private static let writeSQL: String = {
        let names = columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return """
            INSERT OR FAIL INTO notification (app_id, notification_id, \(names.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: names.count + 2).joined(separator: ", ")))
            ON CONFLICT (app_id, notification_id) DO UPDATE SET \(names.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """
    }()

    /// The stored summary of a notification and its cause, or nil when there is none.
    static func read(_ db: Database, appID: String, notificationID: String) throws -> (facts: NotificationFacts, cause: String?)? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(columns) FROM notification WHERE app_id = ? AND notification_id = ?
            """), arguments: [appID, notificationID]) else { return nil }
        return (NotificationFacts(stored: row), row[24])
    }

    /// A notification's stored actions, for the rollup of actions (only a summary that counts some has any).
    static func storedActions(_ db: Database, appID: String, notificationID: String, count: Int) throws -> [(action: String?, response: String?)] {
        guard count > 0 else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT action, response FROM notification_action WHERE app_id = ? AND notification_id = ? ORDER BY rowid
            """), arguments: [appID, notificationID]).map { ($0[0], $0[1]) }
    }

    /// Merges these facts (a group's, for one notification) into the stored summary, which is then to be settled
    /// again: a summary that was settled takes its counts out of the rollups first.
    func upsert(_ db: Database, appID: String, notificationID: String, rollups: RollupDeltas) throws {
        var merged = self
        if let stored = try Self.read(db, appID: appID, notificationID: notificationID) {
            if let cause = stored.cause {
                rollups.add(appID: appID, notificationID: notificationID, facts: stored.facts, cause: cause,
                            actions: try Self.storedActions(db, appID: appID, notificationID: notificationID,
                                                            count: stored.facts.actions),
                            sign: -1)
            }
            merged = stored.facts
            merged.merge(self)
        }
        try merged.write(db, appID: appID, notificationID: notificationID, cause: nil)
        guard !actionRows.isEmpty else { return }
        let insertAction = try db.cachedStatement(sql: """
            INSERT INTO notification_action (app_id, notification_id, ts, action, response) VALUES (?, ?, ?, ?, ?)
            """)
        for row in actionRows {
            insertAction.setUncheckedArguments([appID, notificationID, row.ts, row.action, row.response])
            try insertAction.execute()
        }
    }
}

/// The facts of a group commit's bundles per notification, in the order notifications were first mentioned.
final class PendingSummaries {
    /// How many notifications have facts waiting.
    var count: Int { entries.count }

    private struct Key: Hashable {
        var appID: String
        var notificationID: String
    }

    private var index: [Key: Int] = [:]
    private var entries: [(key: Key, facts: NotificationFacts)] = []

    func merge(appID: String, _ facts: [String: NotificationFacts]) {
        for (id, facts) in facts {
            let key = Key(appID: appID, notificationID: id)
            if let at = index[key] {
                entries[at].facts.merge(facts)
            } else {
                index[key] = entries.count
                entries.append((key, facts))
            }
        }
    }

    /// Folds in the facts of later bundles (`later`'s notifications in its order).
    func absorb(_ later: PendingSummaries) {
        for (key, facts) in later.entries {
            merge(appID: key.appID, [key.notificationID: facts])
        }
    }

    /// Upserts every notification once, and the rollup deltas that unsettling them makes, inside the caller's
    /// transaction; ``removeAll()`` once it has committed.
    func write(_ db: Database) throws {
        let rollups = RollupDeltas()
        for (key, facts) in entries {
            try facts.upsert(db, appID: key.appID, notificationID: key.notificationID, rollups: rollups)
        }
        try rollups.write(db)
    }

    func removeAll() {
        index.removeAll()
        entries.removeAll()
    }
}

extension NotificationFacts {
    /// Bytes added saturating at `Int64.max`: each record's size is bounded (WireBounds), but not how many records
    /// a notification may have.
    static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : total
    }
}
