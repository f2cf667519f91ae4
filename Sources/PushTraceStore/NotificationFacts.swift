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

    /// Folds in the facts of a later bundle, exactly as ``upsertSQL`` folds them into the stored row: a group commit
    /// merges its bundles' facts in memory and upserts each notification once.
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

    /// Why a download or an attachment failed, in the words the report groups failures by (the same rules as the
    /// migration that derives it for older data, `Schema.attachmentFailureSQL`, which knows only the image limit).
    static func failureReason(_ record: PushTraceRecords.Record) -> String? {
        if let error = record.error { return error }
        if record.eventName == .serviceDownload, let status = record.httpStatus, status >= 400 { return "HTTP \(status)" }
        if record.eventName == .serviceAttachment, record.ok == false { return "attachment refused" }
        if let bytes = record.bytes, let kind = AttachmentKind(uti: record.uti, mime: record.mime), bytes > kind.maxBytes {
            return "\(kind.rawValue) over \(kind.limitText)"
        }
        return nil
    }

    /// Merges these facts into the stored summary and marks its cause for settling.
    func upsert(_ db: Database, appID: String, notificationID: String) throws {
        let statement = try db.cachedStatement(sql: Self.upsertSQL)
        statement.setUncheckedArguments([
            appID, notificationID, deviceID, category, appVersion, os, firstTs, lastTs, sentTs, apnsStatus,
            hasAlert, mutableContent, serviceReceived, serviceDelivered, serviceExpired, serviceMs, serviceCrashed,
            contentReceived, contentCrashed, actions, appResponses, records, deviceIDFromDevice, categoryFromPush,
            downloads, downloadBytes, attachmentFailure,
        ])
        try statement.execute()
        guard !actionRows.isEmpty else { return }
        // After the summary: its settling (the rollups) counts these rows.
        let insertAction = try db.cachedStatement(sql: """
            INSERT INTO notification_action (app_id, notification_id, ts, action, response) VALUES (?, ?, ?, ?, ?)
            """)
        for row in actionRows {
            insertAction.setUncheckedArguments([appID, notificationID, row.ts, row.action, row.response])
            try insertAction.execute()
        }
    }

    /// Keep in step with ``merge(_:)``.
    ///
    /// `OR FAIL`: a constraint error ends the bundle (whose savepoint is then rolled back) rather than this statement
    /// alone, so SQLite keeps no statement journal for it — with the rollup triggers, that journal was a third of the
    /// upsert's cost.
    private static let upsertSQL = """
        INSERT OR FAIL INTO notification (app_id, notification_id, device_id, category, app_version, os, first_ts, last_ts,
            sent_ts, apns_status, has_alert, mutable_content, service_received, service_delivered, service_expired,
            service_ms, service_crashed, content_received, content_crashed, actions, app_responses, records,
            device_reached, downloads, download_bytes, attachment_failure, cause)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            ?23, ?25, ?26, ?27, NULL)
        ON CONFLICT (app_id, notification_id) DO UPDATE SET
            device_id = CASE WHEN ?23 THEN excluded.device_id ELSE coalesce(notification.device_id, excluded.device_id) END,
            category = CASE WHEN ?24 THEN excluded.category ELSE coalesce(notification.category, excluded.category) END,
            app_version = coalesce(excluded.app_version, notification.app_version),
            os = coalesce(excluded.os, notification.os),
            first_ts = min(coalesce(notification.first_ts, excluded.first_ts), coalesce(excluded.first_ts, notification.first_ts)),
            last_ts = max(coalesce(notification.last_ts, excluded.last_ts), coalesce(excluded.last_ts, notification.last_ts)),
            sent_ts = coalesce(notification.sent_ts, excluded.sent_ts),
            apns_status = coalesce(excluded.apns_status, notification.apns_status),
            has_alert = coalesce(excluded.has_alert, notification.has_alert),
            mutable_content = coalesce(excluded.mutable_content, notification.mutable_content),
            service_received = max(notification.service_received, excluded.service_received),
            service_delivered = max(notification.service_delivered, excluded.service_delivered),
            service_expired = max(notification.service_expired, excluded.service_expired),
            service_ms = CASE WHEN excluded.service_expired THEN excluded.service_ms
                              WHEN notification.service_expired THEN notification.service_ms
                              ELSE coalesce(excluded.service_ms, notification.service_ms) END,
            service_crashed = max(notification.service_crashed, excluded.service_crashed),
            content_received = max(notification.content_received, excluded.content_received),
            content_crashed = max(notification.content_crashed, excluded.content_crashed),
            actions = notification.actions + excluded.actions,
            app_responses = notification.app_responses + excluded.app_responses,
            records = notification.records + excluded.records,
            device_reached = max(notification.device_reached, excluded.device_reached),
            downloads = notification.downloads + excluded.downloads,
            download_bytes = CASE WHEN excluded.download_bytes IS NULL THEN notification.download_bytes
                                  ELSE coalesce(notification.download_bytes, 0) + excluded.download_bytes END,
            attachment_failure = coalesce(notification.attachment_failure, excluded.attachment_failure),
            cause = NULL
        """
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

    /// Upserts every notification once, inside the caller's transaction; ``removeAll()`` once it has committed.
    func write(_ db: Database) throws {
        for (key, facts) in entries {
            try facts.upsert(db, appID: key.appID, notificationID: key.notificationID)
        }
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
