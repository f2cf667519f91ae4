import PushTraceRecords

/// What a notification's primary cause depends on beyond its summary, folded from its event records as they arrive,
/// so that settling decides the cause from the summary row rather than by reading the records back
/// (``Diagnoser/cause(of:config:lastSeen:)``). Stored as one integer beside the summary.
///
/// The fold is exact where it decides: a notification whose records make the rules compare times, or whose summary
/// values could differ from what the rules read (two `push.sent`, two devices, an event without a time), is marked
/// ``ambiguous`` or left for the timeline, and settled by reading its records as `why` does.
public struct CauseFlags: OptionSet, Sendable, Hashable {
    public let rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    // Bits 0–1 hold the kind of the push's attachment URL (none, image, audio, video). The store keeps the bits
    // that differ from ``usual`` (``storedValue``), so that most notifications' flags are 0 or 1, which SQLite
    // stores in no bytes beyond the column's header; the bits that differ most often come next, below 128. The
    // positions are stored in every summary: a bit is never renumbered or given another meaning.
    private static let urlKindMask = CauseFlags(rawValue: 3)
    /// An event the rules count as shown on the device (``EventName/shownOnDevice``).
    public static let shown = CauseFlags(rawValue: 1 << 2)
    /// A `shared.write`: with a `.dismiss` or a read that found nothing, only the records' times can tell.
    static let sharedWrite = CauseFlags(rawValue: 1 << 3)
    /// An event of a process other than the backend (the rules' device entries).
    public static let deviceEvent = CauseFlags(rawValue: 1 << 4)
    /// An event in a device's bundle (so a device names the notification's device).
    public static let eventFromDevice = CauseFlags(rawValue: 1 << 5)
    /// The content extension's completion handler timed out.
    public static let completionTimeout = CauseFlags(rawValue: 1 << 6)
    /// A `content.action` answered `.dismiss`.
    static let dismissAction = CauseFlags(rawValue: 1 << 7)
    /// An APNs response other than 200.
    public static let apnsRejected = CauseFlags(rawValue: 1 << 8)
    /// A download or attachment that failed by itself (an error, an HTTP error, `ok: false`, a size over its own
    /// kind's limit).
    public static let attachmentFailed = CauseFlags(rawValue: 1 << 9)
    /// A forwarded action (`dismissAndForwardAction`) with no app response at or after it: set by the summary,
    /// which compares their times while it holds them.
    public static let forwardedUnanswered = CauseFlags(rawValue: 1 << 10)
    /// The records need the timeline's times (a `.dismiss` with a shared write, a read that found nothing with a
    /// write, forwarded actions and app responses folded apart) or the summary may not hold what the rules read:
    /// settled from the records. Stored as 2048 by itself, what a summary stored before the flags existed holds.
    public static let ambiguous = CauseFlags(rawValue: 1 << 11)
    /// An event record (the rules read nothing else).
    public static let event = CauseFlags(rawValue: 1 << 12)
    /// The summary's earliest time is an event's: the time the config in force is taken at.
    public static let firstTsIsEvent = CauseFlags(rawValue: 1 << 13)
    /// A `push.sent`.
    public static let sent = CauseFlags(rawValue: 1 << 14)
    /// The `push.sent` names a device.
    public static let sentNamesDevice = CauseFlags(rawValue: 1 << 15)
    /// A `shared.read` that found nothing.
    static let readNotFound = CauseFlags(rawValue: 1 << 16)
    /// The push's attachment URL ends in no extension the system recognises.
    public static let urlExtensionUnknown = CauseFlags(rawValue: 1 << 17)
    /// A download or attachment of no stated kind larger than each kind's limit (three bits, by kind): over the
    /// limit of the URL's kind, it fails.
    private static let unkindedOverShift: Int64 = 18
    /// The push's `interruption_level` (two bits: active or none, passive, time-sensitive, critical).
    private static let pushLevelShift: Int64 = 21
    /// The level of the content the service extension handed back (three bits: none, then each level).
    private static let deliveredLevelShift: Int64 = 23
    /// The push carries an `apns-collapse-id`: whether a later one replaced it only the device's other
    /// notifications can tell.
    public static let collapses = CauseFlags(rawValue: 1 << 26)
    /// The push names its `apns-expiration`: whether it expired or was coalesced while the device could not be
    /// reached only the device's other notifications can tell.
    public static let expires = CauseFlags(rawValue: 1 << 27)

    /// What an ordinary notification's records set: a push sent to a device, which showed it and uploaded its steps.
    static let usual: CauseFlags = [.event, .deviceEvent, .eventFromDevice, .firstTsIsEvent, .sent, .sentNamesDevice, .shown]

    /// The flags as the store keeps them: the bits that differ from ``usual``.
    public var storedValue: Int64 { rawValue ^ Self.usual.rawValue }

    /// The flags a store kept as `storedValue`.
    public init(storedValue: Int64) { self.init(rawValue: storedValue ^ Self.usual.rawValue) }

    /// Folds in one event record of the notification (`event`, its name as `record.eventName` reads it); `fromDevice`
    /// when its bundle is a device's. Records of other types change nothing.
    public mutating func add(event: EventName?, of record: Record, ts: Int64?, fromDevice: Bool) {
        insert(.event)
        if ts == nil { insert(.ambiguous) }
        // As `ProcessKind(rawValue:) != .server`, without making the enum for every record.
        if record.process != ProcessKind.server.rawValue { insert(.deviceEvent) }
        if fromDevice { insert(.eventFromDevice) }
        guard let event else { return }
        switch event {
        case .pushSent:
            if contains(.sent) { insert(.ambiguous) }
            insert(.sent)
            if record.deviceID != nil { insert(.sentNamesDevice) }
            if record.collapseKey != nil { insert(.collapses) }
            if record.expiration != nil { insert(.expires) }
            let level = Self.levelCode(record.interruptionLevel)
            self = CauseFlags(rawValue: rawValue & ~(3 << Self.pushLevelShift) | (level - 1) << Self.pushLevelShift)
            if let url = record.attachmentURL {
                let kind = AttachmentKind(fileExtension: AttachmentKind.fileExtension(of: AttachmentKind.fileName(ofURL: url)))
                if let kind {
                    self = CauseFlags(rawValue: rawValue & ~Self.urlKindMask.rawValue | Self.code(kind))
                } else {
                    insert(.urlExtensionUnknown)
                }
            }
        case .pushAPNsResponse:
            if (record.status ?? 200) != 200 { insert(.apnsRejected) }
        case .serviceDownload, .serviceAttachment:
            if event == .serviceDownload, record.error != nil || (record.httpStatus ?? 0) >= 400 { insert(.attachmentFailed) }
            if event == .serviceAttachment, record.ok == false { insert(.attachmentFailed) }
            guard let bytes = record.bytes else { break }
            if let kind = AttachmentKind(uti: record.uti, mime: record.mime) {
                if bytes > kind.maxBytes { insert(.attachmentFailed) }
            } else {
                for kind in AttachmentKind.allCases where bytes > kind.maxBytes {
                    insert(CauseFlags(rawValue: 1 << (Self.unkindedOverShift + Self.code(kind) - 1)))
                }
            }
        case .serviceDelivered:
            guard record.interruptionLevel != nil else { break }
            // Two deliveries that each name a level: which one the user saw only their times can tell.
            if rawValue & (7 << Self.deliveredLevelShift) != 0 { insert(.ambiguous) }
            self = CauseFlags(rawValue: rawValue | Self.levelCode(record.interruptionLevel) << Self.deliveredLevelShift)
        case .contentCompletionTimeout: insert(.completionTimeout)
        case .contentAction:
            insert(.shown)
            if record.response == ResponseOption.dismiss.rawValue { insert(.dismissAction) }
        case .contentReceived, .appWillPresent, .appResponse: insert(.shown)
        case .sharedWrite: insert(.sharedWrite)
        case .sharedRead:
            if record.found == false { insert(.readNotFound) }
        default: break
        }
    }

    /// Folds in the flags of a later bundle's records. ``firstTsIsEvent``, ``forwardedUnanswered`` and the
    /// ambiguities that depend on the summary's values (two devices, two categories) are the summary's to set.
    public mutating func merge(_ later: CauseFlags) {
        if contains(.sent) && later.contains(.sent) { insert(.ambiguous) }
        let delivered: Int64 = 7 << Self.deliveredLevelShift
        if rawValue & delivered != 0 && later.rawValue & delivered != 0 { insert(.ambiguous) }
        let kind =
            rawValue & Self.urlKindMask.rawValue != 0 ? rawValue & Self.urlKindMask.rawValue : later.rawValue & Self.urlKindMask.rawValue
        self = CauseFlags(rawValue: (rawValue | later.rawValue) & ~Self.urlKindMask.rawValue | kind)
    }

    /// The kind of the push's attachment URL, when it has one the system recognises.
    var urlKind: AttachmentKind? {
        let code = rawValue & Self.urlKindMask.rawValue
        return AttachmentKind.allCases.first { Self.code($0) == code }
    }

    /// Whether a download or attachment of no stated kind is larger than `kind`'s limit.
    func unkindedOver(_ kind: AttachmentKind) -> Bool {
        rawValue & (1 << (Self.unkindedOverShift + Self.code(kind) - 1)) != 0
    }

    /// The level the notification was shown at: the service extension's content's, else the push's.
    var interruptionLevel: InterruptionLevel {
        let delivered = rawValue >> Self.deliveredLevelShift & 7
        let code = delivered != 0 ? delivered : (rawValue >> Self.pushLevelShift & 3) + 1
        return [.active, .passive, .timeSensitive, .critical][Int(code) - 1]
    }

    /// A level's code (1 active, 2 passive, 3 time-sensitive, 4 critical): absent or unknown is active.
    private static func levelCode(_ wire: String?) -> Int64 {
        switch InterruptionLevel(wire: wire) {
        case .active: 1
        case .passive: 2
        case .timeSensitive: 3
        case .critical: 4
        }
    }

    private static func code(_ kind: AttachmentKind) -> Int64 {
        switch kind {
        case .image: 1
        case .audio: 2
        case .video: 3
        }
    }
}

/// A notification's summary as settling reads it: the values the cause rules read, as the summary keeps them, and
/// its ``CauseFlags``.
public struct FoldedNotification: Sendable, Hashable {
    public var flags: CauseFlags
    public var sentTs: Int64?
    public var hasAlert: Bool?
    public var mutableContent: Bool?
    public var category: String?
    /// The device the summary names, and whether a device's bundle named it.
    public var deviceID: String?
    public var deviceIDFromDevice: Bool
    public var firstTs: Int64?
    public var serviceReceived: Bool
    public var serviceExpired: Bool
    public var serviceCrashed: Bool
    public var contentCrashed: Bool
    /// A `content.received` or a `content.action`: the user expanded the notification.
    public var expanded: Bool

    public init(
        flags: CauseFlags, sentTs: Int64?, hasAlert: Bool?, mutableContent: Bool?, category: String?, deviceID: String?,
        deviceIDFromDevice: Bool, firstTs: Int64?, serviceReceived: Bool, serviceExpired: Bool, serviceCrashed: Bool,
        contentCrashed: Bool, expanded: Bool
    ) {
        self.flags = flags
        self.sentTs = sentTs
        self.hasAlert = hasAlert
        self.mutableContent = mutableContent
        self.category = category
        self.deviceID = deviceID
        self.deviceIDFromDevice = deviceIDFromDevice
        self.firstTs = firstTs
        self.serviceReceived = serviceReceived
        self.serviceExpired = serviceExpired
        self.serviceCrashed = serviceCrashed
        self.contentCrashed = contentCrashed
        self.expanded = expanded
    }
}

extension Diagnoser {
    /// The primary cause ``diagnose(_:)`` finds for the notification, decided from its summary; nil when only its
    /// records can tell (``CauseFlags/ambiguous`` and the like). The rules are taken in ``Cause`` order and the first
    /// that holds answers. `config` gives the config in force for a device at a time, and `lastSeen` a device's latest
    /// upload, as ``DiagnosisInput`` has them; each is asked only when a rule needs it.
    public func cause(
        of folded: FoldedNotification,
        config: (_ deviceID: String, _ at: Int64) async throws -> ConfigInForce,
        lastSeen: (_ deviceID: String) async throws -> Int64?
    ) async throws -> Cause? {
        let flags = folded.flags
        guard !flags.contains(.ambiguous) else { return nil }
        guard flags.contains(.event) else { return .unknownNotification }
        // The device the rules look the config and the last upload up for: the first device event's bundle's, or the
        // push's. The summary holds it when both agree with the config's time, the first event's.
        guard flags.contains(.firstTsIsEvent), folded.deviceIDFromDevice == flags.contains(.eventFromDevice),
            let firstTs = folded.firstTs
        else { return nil }
        let sent = flags.contains(.sent)
        if flags.contains(.apnsRejected) { return .apnsRejected }
        // The config in force, fetched once and only when a rule reads it.
        var fetched: ConfigInForce?
        func inForce() async throws -> ConfigInForce {
            if let fetched { return fetched }
            var found = ConfigInForce()
            if let deviceID = folded.deviceID { found = try await config(deviceID, WireBounds.clampedEpoch(firstTs)) }
            fetched = found
            return found
        }
        if !flags.contains(.shown), try await SettingsInForce(inForce())?.settings.nothingShown != nil {
            return .notificationsDisabled
        }
        if sent, folded.hasAlert == false { return .alertMissing }
        if sent, folded.mutableContent == false { return .mutableContentMissing }
        if sent, folded.mutableContent == true, folded.hasAlert == true, flags.contains(.shown), !folded.serviceReceived {
            return .serviceNotRun
        }
        if folded.serviceCrashed { return .serviceCrashed }
        if folded.serviceExpired { return .serviceTimeout }
        if flags.contains(.attachmentFailed) || flags.contains(.urlExtensionUnknown)
            || flags.urlKind.map(flags.unkindedOver) == true
        {
            return .attachmentFailed
        }
        let inForce = try await inForce()
        if let category = folded.category, !category.isEmpty {
            if let registered = inForce.app?.record.categories?.map(\.id), !registered.contains(category) {
                return .categoryUnregistered
            }
            if let handled = inForce.content?.record.infoPlist?.categories, !handled.contains(category) {
                return .categoryNotHandled
            }
        }
        if let content = inForce.content, content.record.interactiveControls == true,
            content.record.infoPlist?.userInteractionEnabled != true
        {
            return .interactionDisabled
        }
        if folded.contentCrashed { return .contentCrashed }
        if flags.contains(.completionTimeout) { return .completionNotCalled }
        if flags.contains(.sharedWrite), flags.contains(.dismissAction) || flags.contains(.readNotFound) { return nil }
        if !flags.contains(.deviceEvent) {
            guard sent, let sentTs = folded.sentTs else { return .ok }
            if flags.contains(.sentNamesDevice), let deviceID = folded.deviceID,
                let seen = try await lastSeen(deviceID).map(WireBounds.clampedEpoch),
                seen >= WireBounds.clampedEpoch(sentTs) + settings.notDeliveredAfterMs
            {
                // With an expiration, what APNs's rules make of it depends on the device's other notifications:
                // read as `why` does.
                return flags.contains(.expires) ? nil : .notDelivered
            }
            return .awaitingDeviceLogs
        }
        if !folded.expanded {
            if flags.contains(.collapses) { return nil }
            let level = flags.interruptionLevel
            let settings = SettingsInForce(inForce)?.settings
            if level == .passive || settings?.authorizationStatus == .provisional
                || settings?.alertStyleSetting == NotificationSettings.AlertStyle.none
            {
                return .deliveredQuietly
            }
            if settings?.scheduledDeliverySetting == .enabled,
                level == .active || (level == .timeSensitive && settings?.timeSensitiveSetting == .disabled)
            {
                return .heldForSummary
            }
            return .notExpanded
        }
        if flags.contains(.forwardedUnanswered) { return .forwardedActionUnhandled }
        return .ok
    }
}

extension CauseFlags {
    /// Inserts or removes `member`.
    public mutating func set(_ member: CauseFlags, _ present: Bool) {
        if present { insert(member) } else { remove(member) }
    }
}
