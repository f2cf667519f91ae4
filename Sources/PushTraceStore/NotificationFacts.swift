import PushTraceCore
import PushTraceRecords

/// The per-notification summary row, accumulated over one bundle and merged into `notification` at its end, so
/// that searches and reports read one row per notification and never rescan records. What a summary holds is
/// decided here alone (``add(_:ts:manifest:)``, ``merge(_:)``); each engine only stores it (PushTraceSQLite's
/// `NotificationFacts+Storage.swift` reads and writes it).
package struct NotificationFacts {
    package var deviceID: String?
    package var deviceIDFromDevice = false
    package var category: String?
    package var categoryFromPush = false
    package var appVersion: String?
    package var os: String?
    package var firstTs: Int64?
    package var lastTs: Int64?
    package var sentTs: Int64?
    package var apnsStatus: Int64?
    package var hasAlert: Bool?
    package var mutableContent: Bool?
    package var serviceReceived = false
    package var serviceDelivered = false
    package var serviceExpired = false
    package var serviceMs: Int64?
    package var serviceCrashed = false
    package var contentReceived = false
    package var contentCrashed = false
    package var actions = 0
    package var appResponses = 0
    package var records = 0
    package var downloads = 0
    package var downloadBytes: Int64?
    package var attachmentFailure: String?
    /// The content extension's actions (action, response), in the order recorded: what the action rollup counts.
    /// At most ``maxActionRows``, each text at most `WireBounds.maxIdentifierBytes`.
    package var actionRows: [(action: String?, response: String?)] = []

    /// The most actions a summary keeps for the action rollup. A person taps a few; a device that sends thousands
    /// for one notification must not make each write of its summary rewrite them all (`actions` still counts all).
    package static let maxActionRows = 64

    package init() {}

    package mutating func add(_ record: PushTraceRecords.Record, ts: Int64?, manifest: Manifest) {
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
            if let category = record.category {
                self.category = category
                categoryFromPush = true
            }
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
            if actionRows.count < Self.maxActionRows {
                actionRows.append((record.action.map(Self.bounded), record.response.map(Self.bounded)))
            }
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
    package mutating func merge(_ later: NotificationFacts) {
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
        actionRows += later.actionRows.prefix(max(0, Self.maxActionRows - actionRows.count))
    }

    /// Why a download or an attachment failed, in the words the report groups failures by.
    /// `text` cut to `WireBounds.maxIdentifierBytes` of UTF-8 (an action's identifier is an app's own, and short).
    static func bounded(_ text: String) -> String {
        text.utf8.count <= WireBounds.maxIdentifierBytes
            ? text
            : String(decoding: Array(text.utf8.prefix(WireBounds.maxIdentifierBytes)), as: UTF8.self)
    }

    package static func failureReason(_ record: PushTraceRecords.Record) -> String? {
        if let error = record.error { return error }
        if record.eventName == .serviceDownload, let status = record.httpStatus, status >= 400 { return "HTTP \(status)" }
        if record.eventName == .serviceAttachment, record.ok == false { return "attachment refused" }
        if let bytes = record.bytes, let kind = AttachmentKind(uti: record.uti, mime: record.mime), bytes > kind.maxBytes {
            return "\(kind.rawValue) over \(kind.limitText)"
        }
        return nil
    }
}

/// The facts of a group commit's bundles per notification, in the order notifications were first mentioned.
package final class PendingSummaries {
    /// How many notifications have facts waiting.
    package var count: Int { entries.count }

    package init() {}

    private struct Key: Hashable {
        var appID: String
        var notificationID: String
    }

    private var index: [Key: Int] = [:]
    private var entries: [(key: Key, facts: NotificationFacts)] = []

    package func merge(appID: String, _ facts: [String: NotificationFacts]) {
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
    package func absorb(_ later: PendingSummaries) {
        for (key, facts) in later.entries {
            merge(appID: key.appID, [key.notificationID: facts])
        }
    }

    /// Every notification's facts, in the order first mentioned.
    package var all: [(appID: String, notificationID: String, facts: NotificationFacts)] {
        entries.map { ($0.key.appID, $0.key.notificationID, $0.facts) }
    }

    package func removeAll() {
        index.removeAll()
        entries.removeAll()
    }
}

extension NotificationFacts {
    /// Bytes added saturating at `Int64.max`: each record's size is bounded (WireBounds), but not how many records
    /// a notification may have.
    package static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : total
    }
}
