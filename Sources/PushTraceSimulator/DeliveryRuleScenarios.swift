import PushTraceCore
import PushTraceRecords

/// The causes of the user's notification settings and of APNs's delivery rules (docs/protocol.md#causes), each on
/// new devices of its own. They are drawn from a random stream of their own, after the everyday traffic and the
/// incident, so that every other simulated notification is written exactly as without them.
struct DeliveryRuleScenarios {
    /// The causes written here, each at least once.
    static let causes: [Cause] = [
        .notificationsDisabled, .expiredUndelivered, .coalescedOffline, .replaced, .deliveredQuietly, .heldForSummary,
    ]

    private(set) var devices: [SimulatedDevice] = []
    private(set) var server: [String: [PendingRecord]] = [:]
    private(set) var device: [String: [PendingRecord]] = [:]
    private(set) var expectations: [SimulationSummary.Expectation] = []

    /// Writes `perCause` notifications of each cause (and the later notifications some of them rest on), sent between
    /// `start` and three hours before `end`, to new devices of the apps in turn; `taken` holds each app's device IDs.
    init(perCause: Int, start: Int64, end: Int64, taken: inout [String: Set<UInt64>], _ rng: inout SeededRandom) {
        var index = 0
        for cause in Self.causes {
            for _ in 0..<perCause {
                let app = SimulatedApp.all[index % SimulatedApp.all.count]
                index += 1
                let variant = rng.chance(0.5)
                var device = Simulator.makeDevice(app: app, flaw: .none, taken: &taken[app.id, default: []], &rng)
                device.settings = Self.settings(for: cause, variant: variant)
                devices.append(device)
                let sent = rng.int(start...(end - 4 * 3_600_000))
                let category = rng.pick(app.categories).id
                switch cause {
                case .notificationsDisabled:
                    add(cause, written: .notDelivered, device, category, sent, &rng)
                case .expiredUndelivered:
                    add(cause, written: .notDelivered, device, category, sent, &rng, push: [("expiration", 0)])
                case .coalescedOffline:
                    // Sent while the device cannot be reached, with a day to live; the device comes back for the next.
                    add(cause, written: .notDelivered, device, category, sent, &rng, push: [("expiration", .int(sent / 1000 + 86_400))])
                    add(.ok, written: .ok, device, category, sent + rng.int(600_000...1_800_000), &rng)
                case .replaced:
                    let collapse = JSONValue.string("pick-\(rng.int(100...999))")
                    add(cause, written: .notExpanded, device, category, sent, &rng, push: [("collapse_id", collapse)])
                    add(.ok, written: .ok, device, category, sent + rng.int(300_000...900_000), &rng, push: [("collapse_id", collapse)])
                case .deliveredQuietly:
                    // Provisional authorization, or a push the extension hands back at level passive.
                    add(
                        cause, written: .notExpanded, device, category, sent, &rng,
                        delivered: variant ? [] : [("interruption_level", "passive")])
                default:
                    // Held for the summary: an active push, or a time-sensitive one the user turned off.
                    add(
                        cause, written: .notExpanded, device, category, sent, &rng,
                        push: variant ? [("interruption_level", "time-sensitive")] : [])
                }
            }
        }
    }

    /// The settings a device of `cause` records; `variant` picks the second way to the same cause.
    static func settings(for cause: Cause, variant: Bool) -> NotificationSettings {
        var settings = NotificationSettings(
            authorization: .authorized, alert: .enabled, lockScreen: .enabled, notificationCenter: .enabled,
            alertStyle: .banner, scheduledDelivery: .disabled, timeSensitive: .enabled)
        switch cause {
        case .notificationsDisabled:
            settings = NotificationSettings(
                authorization: variant ? .denied : .authorized, alert: .disabled, lockScreen: .disabled,
                notificationCenter: .disabled, alertStyle: NotificationSettings.AlertStyle.none, scheduledDelivery: .disabled,
                timeSensitive: .disabled)
        case .deliveredQuietly where variant:
            settings.authorization = NotificationSettings.Authorization.provisional.rawValue
            settings.alert = NotificationSettings.Setting.disabled.rawValue
            settings.lockScreen = NotificationSettings.Setting.disabled.rawValue
            settings.alertStyle = NotificationSettings.AlertStyle.none.rawValue
        case .heldForSummary:
            settings.scheduledDelivery = NotificationSettings.Setting.enabled.rawValue
            if variant { settings.timeSensitive = NotificationSettings.Setting.disabled.rawValue }
        default: break
        }
        return settings
    }

    /// One notification written as the everyday `written` cause, with fields added to its `push.sent` and
    /// `service.delivered`, expected to be diagnosed as `cause`.
    private mutating func add(
        _ cause: Cause, written: Cause, _ device: SimulatedDevice, _ category: String, _ sent: Int64,
        _ rng: inout SeededRandom, push: [(String, JSONValue?)] = [], delivered: [(String, JSONValue?)] = []
    ) {
        let notification = SimulatedNotification(id: rng.uuid(), device: device, category: category, sentTs: sent, expected: written)
        var builder = ScenarioBuilder(notification)
        builder.build(&rng)
        var serverRecords = builder.server, deviceRecords = builder.device
        for index in serverRecords.indices where serverRecords[index].event == .pushSent { serverRecords[index].fields += push }
        for index in deviceRecords.indices where deviceRecords[index].event == .serviceDelivered {
            deviceRecords[index].fields += delivered
        }
        server[device.app.id, default: []] += serverRecords
        self.device[device.key, default: []] += deviceRecords
        expectations.append(.init(appID: device.app.id, notificationID: notification.id, cause: cause))
    }
}

extension PendingRecord {
    /// The event the record is, when it is one.
    var event: EventName? {
        guard case .string(let name)?? = fields.first(where: { $0.0 == "event" })?.1 else { return nil }
        return EventName(rawValue: name)
    }
}
