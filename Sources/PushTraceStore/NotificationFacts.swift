import PushTraceCore
import PushTraceRecords

/// The per-notification summary row, accumulated over one bundle and merged into `notification` at its end, so
/// that searches and reports read one row per notification and never rescan records. What a summary holds is
/// decided here alone (``add(_:ts:manifest:)``, ``merge(_:)``); each engine only stores it (PushTraceSQLite's
/// `NotificationFacts+Storage.swift` reads and writes it).
package struct NotificationFacts: Sendable {
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
    /// What settling decides the cause from beside these values (``CauseFlags``).
    package var causeFlags = CauseFlags()
    /// The times of the latest forwarded action and the latest app response folded in, while the facts are those of
    /// records in memory (``timesKnown``): the store keeps only whether an action went unanswered
    /// (``CauseFlags/forwardedUnanswered``).
    private var forwardedTs: Int64?
    private var respondedTs: Int64?
    /// False for facts read from the store, which keeps no times of actions.
    package var timesKnown = true

    /// The summary as settling reads it (``Diagnoser/cause(of:config:lastSeen:)``).
    package var folded: FoldedNotification {
        FoldedNotification(
            flags: causeFlags, sentTs: sentTs, hasAlert: hasAlert, mutableContent: mutableContent, category: category,
            deviceID: deviceID, deviceIDFromDevice: deviceIDFromDevice, firstTs: firstTs, serviceReceived: serviceReceived,
            serviceExpired: serviceExpired, serviceCrashed: serviceCrashed, contentCrashed: contentCrashed,
            expanded: contentReceived || actions > 0)
    }

    /// The most actions a summary keeps for the action rollup. A person taps a few; a device that sends thousands
    /// for one notification must not make each write of its summary rewrite them all (`actions` still counts all).
    package static let maxActionRows = 64

    package init() {}

    package mutating func add(_ record: PushTraceRecords.Record, ts: Int64?, manifest: Manifest) {
        records += 1
        let isEvent = record.recordType == .event
        if let ts {
            if firstTs.map({ ts < $0 }) ?? true {
                causeFlags.set(.firstTsIsEvent, isEvent)
            } else if ts == firstTs, isEvent {
                causeFlags.insert(.firstTsIsEvent)
            }
            firstTs = min(firstTs ?? ts, ts)
            lastTs = max(lastTs ?? ts, ts)
        }
        if !manifest.isFromServer {
            if deviceIDFromDevice, deviceID != manifest.deviceID { causeFlags.insert(.ambiguous) }
            deviceID = manifest.deviceID
            deviceIDFromDevice = true
            appVersion = manifest.appVersion ?? appVersion
            os = manifest.os ?? os
        }
        guard isEvent else { return }
        let event = record.eventName
        causeFlags.add(event: event, of: record, ts: ts, fromDevice: !manifest.isFromServer)
        guard let event else { return }
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
            // The rules take the first of each; the summary takes the first category it meets.
            if event == .serviceReceived ? serviceReceived : contentReceived { causeFlags.insert(.ambiguous) }
            if event == .serviceReceived { serviceReceived = true } else { contentReceived = true }
            if !categoryFromPush {
                if category == nil {
                    category = record.category
                } else if let other = record.category, other != category {
                    causeFlags.insert(.ambiguous)
                }
            }
        case .serviceDelivered:
            serviceDelivered = true
            if !serviceExpired { serviceMs = record.elapsedMs }
        case .serviceExpired:
            serviceExpired = true
            serviceMs = record.elapsedMs
        case .serviceAbnormalExit: serviceCrashed = true
        case .contentAbnormalExit: contentCrashed = true
        case .contentAction:
            if record.response == ResponseOption.dismissAndForwardAction.rawValue {
                forwardedTs = max(forwardedTs ?? .min, WireBounds.clampedEpoch(ts ?? 0))
                answerForwarded()
            }
            actions += 1
            if actionRows.count < Self.maxActionRows {
                actionRows.append((record.action.map(Self.bounded), record.response.map(Self.bounded)))
            }
        case .appResponse:
            appResponses += 1
            respondedTs = max(respondedTs ?? .min, WireBounds.clampedEpoch(ts ?? 0))
            answerForwarded()
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
        // Whether the earliest record is an event: the side with the earlier first time says (either, on a tie).
        let firstIsEvent: Bool
        switch (firstTs, later.firstTs) {
        case (let mine?, let theirs?) where theirs < mine: firstIsEvent = later.causeFlags.contains(.firstTsIsEvent)
        case (let mine?, let theirs?) where theirs == mine: firstIsEvent = causeFlags.union(later.causeFlags).contains(.firstTsIsEvent)
        case (nil, _?): firstIsEvent = later.causeFlags.contains(.firstTsIsEvent)
        default: firstIsEvent = causeFlags.contains(.firstTsIsEvent)
        }
        let wasUnanswered = causeFlags.contains(.forwardedUnanswered)
        causeFlags.merge(later.causeFlags)
        causeFlags.set(.firstTsIsEvent, firstIsEvent)
        if deviceIDFromDevice, later.deviceIDFromDevice, deviceID != later.deviceID { causeFlags.insert(.ambiguous) }
        if serviceReceived && later.serviceReceived || contentReceived && later.contentReceived {
            causeFlags.insert(.ambiguous)
        }
        if !categoryFromPush, !later.categoryFromPush, let category, let other = later.category, category != other {
            causeFlags.insert(.ambiguous)
        }
        if timesKnown, later.timesKnown {
            forwardedTs = [forwardedTs, later.forwardedTs].compactMap { $0 }.max()
            respondedTs = [respondedTs, later.respondedTs].compactMap { $0 }.max()
            answerForwarded()
        } else {
            // A side's unanswered action may be answered by the other side's responses, at times not kept.
            if wasUnanswered && later.appResponses > 0 || later.causeFlags.contains(.forwardedUnanswered) && appResponses > 0 {
                causeFlags.insert(.ambiguous)
            }
            timesKnown = false
        }
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

    /// Whether a forwarded action went unanswered, from the times held; facts read from the store hold none, and
    /// what they add cannot be compared with what they hold.
    private mutating func answerForwarded() {
        guard timesKnown else {
            causeFlags.insert(.ambiguous)
            return
        }
        causeFlags.set(.forwardedUnanswered, forwardedTs.map { forwarded in respondedTs.map { forwarded > $0 } ?? true } ?? false)
    }

    /// `text` cut to `WireBounds.maxIdentifierBytes` of UTF-8 (an action's identifier is an app's own, and short).
    static func bounded(_ text: String) -> String {
        text.utf8.count <= WireBounds.maxIdentifierBytes
            ? text
            : String(decoding: Array(text.utf8.prefix(WireBounds.maxIdentifierBytes)), as: UTF8.self)
    }

    /// Why a download or an attachment failed, in the words the report groups failures by.
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
