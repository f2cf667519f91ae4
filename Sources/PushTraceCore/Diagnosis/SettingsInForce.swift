import PushTraceRecords

/// The user's notification settings in force for a notification (docs/protocol.md#notification-settings): those
/// of the latest config record that carries them, of the same app and device, at or before the notification's first
/// record.
public struct SettingsInForce: Sendable, Hashable {
    /// The config record that carried them.
    public var entry: TimelineEntry
    /// The first of the device's settings records, in the run that ends with ``entry``, that already said nothing can
    /// be shown: since when. Nil when the store did not read the device's earlier records.
    public var disabledSince: TimelineEntry?

    public init(entry: TimelineEntry, disabledSince: TimelineEntry? = nil) {
        self.entry = entry
        self.disabledSince = disabledSince
    }

    /// The settings in force among the config records in force, one per process: the latest that carries them.
    public init?(_ config: ConfigInForce) {
        guard
            let latest = config.all.filter({ $0.record.notificationSettings.map { !$0.isEmpty } ?? false })
                .max(by: { $0.ts < $1.ts })
        else { return nil }
        self.init(entry: latest)
    }

    public var settings: NotificationSettings { entry.record.notificationSettings ?? NotificationSettings() }

    /// The settings in force at `at` among `history` (a device's config records, any order), with the run of
    /// records before it that say nothing can be shown for the same reason.
    public init?(history: [TimelineEntry], at: Int64) {
        let carrying = history.filter { $0.ts <= at && ($0.record.notificationSettings.map { !$0.isEmpty } ?? false) }
            .sorted { $0.ts < $1.ts }
        guard let latest = carrying.last else { return nil }
        self.init(entry: latest)
        guard let reason = settings.nothingShown else { return }
        var first = latest
        for earlier in carrying.dropLast().reversed() {
            guard earlier.record.notificationSettings?.nothingShown == reason else { break }
            first = earlier
        }
        disabledSince = first
    }
}

/// The device's other notifications that APNs's delivery rules read (docs/protocol.md#causes): those sent after
/// this one that the device recorded, and when the device first recorded anything after this push.
public struct DeviceNeighbours: Sendable, Hashable {
    /// The corrected time of the device's first record, of any notification, after this one's `push.sent`.
    public var firstRecordAfterSent: Int64?
    /// Notifications of the same app to the same device, sent after this one, that the device's records mention;
    /// by the time they were sent.
    public var laterReached: [Neighbour]

    public init(firstRecordAfterSent: Int64?, laterReached: [Neighbour]) {
        self.firstRecordAfterSent = firstRecordAfterSent
        self.laterReached = laterReached.sorted { ($0.sentTs, $0.notificationID) < ($1.sentTs, $1.notificationID) }
    }

    /// Another notification of the device.
    public struct Neighbour: Sendable, Hashable {
        public var notificationID: String
        /// Its `push.sent`, corrected.
        public var sentTs: Int64
        /// Its push's `apns-collapse-id`.
        public var collapseID: String?
        /// The corrected time of the device's first record of it.
        public var reachedTs: Int64

        public init(notificationID: String, sentTs: Int64, collapseID: String?, reachedTs: Int64) {
            self.notificationID = notificationID
            self.sentTs = sentTs
            self.collapseID = collapseID
            self.reachedTs = reachedTs
        }
    }
}
