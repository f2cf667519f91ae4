import PushTraceRecords

/// One stored record as the diagnosis and the timeline see it: its corrected time and the decoded fields.
public struct TimelineEntry: Sendable, Hashable {
    /// Corrected time (docs/protocol.md#clocks), epoch milliseconds.
    public var ts: Int64
    /// The writer's own clock, when it differs from `ts` (corrected, or held back behind `push.sent`).
    public var deviceTs: Int64?
    /// The device whose bundle held the record (nil for the backend's records).
    public var deviceID: String?
    /// The decoded fields and the line, shared between copies: the rules pass entries around as evidence, and a
    /// record's forty fields made every copy cost forty reference counts.
    private var storage: Storage

    public var record: Record {
        get { storage.record }
        set { storage = Storage(record: newValue, json: storage.json) }
    }

    /// The line as stored, with every field including those this version does not know.
    public var json: String {
        get { storage.json }
        set { storage = Storage(record: storage.record, json: newValue) }
    }

    /// The stored times when they lay outside ``WireBounds/epochMilliseconds`` (an earlier release stored them
    /// unchecked); `ts` and `deviceTs` then hold them clamped into the range, so that no reader's arithmetic on them
    /// can overflow, and these are what the timeline shows.
    public private(set) var outOfRangeTs: Int64?
    public private(set) var outOfRangeDeviceTs: Int64?

    public init(ts: Int64, deviceTs: Int64? = nil, deviceID: String? = nil, record: Record, json: String) {
        self.ts = WireBounds.clampedEpoch(ts)
        self.deviceTs = deviceTs.map(WireBounds.clampedEpoch)
        if self.ts != ts { outOfRangeTs = ts }
        if self.deviceTs != deviceTs { outOfRangeDeviceTs = deviceTs }
        self.deviceID = deviceID
        self.storage = Storage(record: record, json: json)
    }

    public var event: EventName? { record.eventName }
    public var process: ProcessKind? { record.processKind }

    public static func == (lhs: TimelineEntry, rhs: TimelineEntry) -> Bool {
        lhs.ts == rhs.ts && lhs.deviceTs == rhs.deviceTs && lhs.deviceID == rhs.deviceID
            && lhs.outOfRangeTs == rhs.outOfRangeTs && lhs.outOfRangeDeviceTs == rhs.outOfRangeDeviceTs
            && (lhs.storage === rhs.storage || (lhs.record == rhs.record && lhs.json == rhs.json))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ts)
        hasher.combine(deviceTs)
        hasher.combine(deviceID)
        hasher.combine(record)
        hasher.combine(json)
    }

    private final class Storage: Sendable {
        let record: Record
        let json: String

        init(record: Record, json: String) {
            self.record = record
            self.json = json
        }
    }
}

/// The config records in force for a notification (docs/protocol.md#config-records, #causes): the latest of each process at or before the
/// notification's first record.
public struct ConfigInForce: Sendable, Hashable {
    public var app: TimelineEntry?
    public var service: TimelineEntry?
    public var content: TimelineEntry?

    public init(app: TimelineEntry? = nil, service: TimelineEntry? = nil, content: TimelineEntry? = nil) {
        self.app = app
        self.service = service
        self.content = content
    }

    /// Every config present, app first.
    public var all: [TimelineEntry] { [app, service, content].compactMap { $0 } }
}

/// What the diagnosis of one notification reads: all of it comes from the store, none of it from I/O here.
public struct DiagnosisInput: Sendable {
    public var appID: String
    public var notificationID: String
    /// The notification's event records, in time order.
    public var entries: [TimelineEntry]
    public var config: ConfigInForce
    /// The latest corrected time of any record the notification's device uploaded for this app, if known.
    public var deviceLastSeen: Int64?
    /// Set when the store read only part of what it holds for the notification (``TimelineCut``).
    public var timelineCut: TimelineCut?
    /// The user's notification settings in force on the device, when a config record carried them.
    public var settings: SettingsInForce?
    /// The device's other notifications, as APNs's delivery rules read them; nil when the store was not asked.
    public var neighbours: DeviceNeighbours?

    public init(
        appID: String, notificationID: String, entries: [TimelineEntry], config: ConfigInForce = .init(),
        deviceLastSeen: Int64? = nil, timelineCut: TimelineCut? = nil, settings: SettingsInForce? = nil,
        neighbours: DeviceNeighbours? = nil
    ) {
        self.appID = appID
        self.notificationID = notificationID
        self.entries = entries.sorted { $0.ts < $1.ts }
        self.config = config
        self.deviceLastSeen = deviceLastSeen.map(WireBounds.clampedEpoch)
        self.timelineCut = timelineCut
        self.settings = settings ?? SettingsInForce(config)
        self.neighbours = neighbours
    }
}

/// Where a notification's timeline was cut: the store reads at most so many of the blocks that name a notification
/// (anyone holding the app's ingest token can upload lines naming any ID), in the order they were stored, and says
/// so rather than reading them all.
public struct TimelineCut: Sendable, Hashable {
    /// The stored blocks read: the first ones stored.
    public var blocksRead: Int
    /// The corrected time of the latest record read, when one was.
    public var through: Int64?

    public init(blocksRead: Int, through: Int64?) {
        self.blocksRead = blocksRead
        self.through = through
    }

    /// The sentence `why` shows.
    public var message: String {
        "the timeline was cut: only the first \(blocksRead) stored blocks that name this notification were read"
            + (through.map { "; the records read end at \($0) (epoch ms)" } ?? "")
            + "; records stored after them are not shown here nor by pushtrace logs (pushtrace export --app with"
            + " --since and --until lists every line stored in a period)"
    }
}

/// Thresholds of the diagnosis a team may tune.
public struct DiagnosisSettings: Sendable, Hashable {
    /// How long after the push a device's later uploads must reach before silence means `not_delivered`.
    public var notDeliveredAfterMs: Int64
    /// How soon after a `shared.write` a `dismiss` counts as closing the card before it showed the update.
    public var dismissWindowMs: Int64

    public init(notDeliveredAfterMs: Int64 = 30 * 60_000, dismissWindowMs: Int64 = 1_000) {
        self.notDeliveredAfterMs = notDeliveredAfterMs
        self.dismissWindowMs = dismissWindowMs
    }

    public static let `default` = DiagnosisSettings()
}
