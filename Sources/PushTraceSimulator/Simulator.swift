import Foundation
import PushTraceCore
import PushTraceRecords

/// What to simulate.
public struct SimulationOptions: Sendable {
    public var seed: UInt64
    public var notifications: Int
    /// The end of the simulated period, epoch milliseconds (default Monday 2026-11-16 00:00 UTC).
    public var end: Int64
    public var days: Int
    /// A campaign whose attachment host slows down, on top of the everyday traffic (none by default).
    public var incident: SimulatedIncident?

    public init(
        seed: UInt64 = 42, notifications: Int = 600, end: Int64 = 1_794_787_200_000, days: Int = 14,
        incident: SimulatedIncident? = nil
    ) {
        self.seed = seed
        self.notifications = notifications
        self.end = end
        self.days = days
        self.incident = incident
    }
}

/// A marketing campaign gone wrong: one app broadcasts a push of one category to many devices within minutes, and
/// the host its images come from slows down under the load, so a large share of the service extensions run out of
/// time. This is the spike `pushtrace alerts` (rule `service_timeout_spike`) is there to catch.
public struct SimulatedIncident: Sendable {
    /// When the first push is sent (epoch milliseconds); the rest follow within ten minutes.
    public var start: Int64
    /// How many devices the campaign reaches (each is a new, healthy device of the app, sent one push).
    public var notifications: Int
    /// The share of the campaign's service extensions that time out.
    public var timeoutShare: Double

    /// The app and category the campaign is sent for.
    public static let appID = "net.rorklab.dailypick", category = "DAILY_PICK"

    public init(start: Int64, notifications: Int = 300, timeoutShare: Double = 0.4) {
        self.start = start
        self.notifications = notifications
        self.timeoutShare = timeoutShare
    }
}

/// The answer key a simulation writes beside its bundles (`scenarios.json`).
public struct SimulationSummary: Codable, Sendable {
    /// A notification and the cause its records were written to produce.
    public struct Expectation: Codable, Sendable, Hashable {
        public var appID: String
        public var notificationID: String
        public var cause: Cause

        enum CodingKeys: String, CodingKey { case appID = "app_id", notificationID = "notification_id", cause }
    }

    public var seed: UInt64
    public var notifications: Int
    public var records: Int
    public var bundles: Int
    /// Up to three notifications per cause, to try `pushtrace why` on.
    public var examples: [String: [Expectation]]
    /// Every notification's expected cause (written for simulations of at most 20,000 notifications).
    public var expected: [Expectation]?
}

/// Writes realistic bundles: three apps, their devices (some with drifted configuration, some with wrong clocks),
/// normal traffic, and every cause of docs/protocol.md#causes at least once.
public enum Simulator {
    /// Simulates into `directory` (one folder per app) and writes `scenarios.json` there.
    public static func run(
        _ options: SimulationOptions, into directory: URL,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws -> SimulationSummary {
        var rng = SeededRandom(seed: options.seed)
        let start = options.end - Int64(options.days) * 86_400_000
        var fleet = makeFleet(options, &rng)
        // Each notification picks a device of its app with the flaw its cause needs; grouping once keeps that
        // constant-time (filtering the fleet per notification made simulating quadratic in its size).
        let pools = Dictionary(grouping: fleet) { DevicePool(app: $0.app.id, flaw: $0.flaw) }
        var serverRecords: [String: [PendingRecord]] = [:]
        var deviceRecords: [String: [PendingRecord]] = [:]
        var expectations: [SimulationSummary.Expectation] = []
        let forced = Self.everyday
        for i in 0..<options.notifications {
            let cause = i < forced.count * max(1, options.notifications / 400) ? forced[i % forced.count] : weightedCause(&rng)
            let app = SimulatedApp.all[i < forced.count * 3 ? i / forced.count % 3 : Int(rng.int(0...2))]
            let device = pickDevice(for: cause, app: app, pools: pools, &rng)
            let category = cause == .categoryNotHandled ? app.categories[1].id : rng.pick(app.categories).id
            let latest = cause == .notDelivered ? start + (options.end - start) * 7 / 10 : options.end - 3 * 3_600_000
            let notification = SimulatedNotification(
                id: rng.uuid(), device: device, category: category,
                sentTs: rng.int(start...latest), expected: cause)
            var builder = ScenarioBuilder(notification)
            builder.build(&rng)
            serverRecords[app.id, default: []] += builder.server
            deviceRecords[device.key, default: []] += builder.device
            expectations.append(.init(appID: app.id, notificationID: notification.id, cause: cause))
            if i % 10_000 == 9_999 { progress?(i + 1, options.notifications) }
        }
        progress?(options.notifications, options.notifications)
        let everydayCount = expectations.count
        // Drawn only when asked for, after the everyday traffic: without an incident, every file stays as it was.
        if let incident = options.incident {
            let app = SimulatedApp.all.first { $0.id == SimulatedIncident.appID }!
            var taken = Set(fleet.lazy.filter { $0.app.id == app.id }.compactMap { UInt64($0.id.dropFirst(2), radix: 16) })
            for _ in 0..<max(0, incident.notifications) {
                let device = makeDevice(app: app, flaw: .none, taken: &taken, &rng)
                fleet.append(device)
                var cause: Cause = .serviceTimeout
                if !rng.chance(incident.timeoutShare) {
                    // The everyday mix, less the causes a healthy device reached by a fresh push cannot produce.
                    repeat {
                        cause = weightedCause(&rng)
                    } while [
                        .categoryNotHandled, .interactionDisabled,
                        .appGroupMismatch, .awaitingDeviceLogs, .notDelivered, .serviceTimeout,
                    ].contains(cause)
                }
                let notification = SimulatedNotification(
                    id: rng.uuid(), device: device, category: SimulatedIncident.category,
                    sentTs: incident.start + rng.int(0...600_000), expected: cause)
                var builder = ScenarioBuilder(notification)
                builder.build(&rng)
                serverRecords[app.id, default: []] += builder.server
                deviceRecords[device.key, default: []] += builder.device
                expectations.append(.init(appID: app.id, notificationID: notification.id, cause: cause))
            }
        }

        // The settings and delivery-rule causes, from a stream of their own (the traffic above is unchanged by them).
        var ruleRandom = SeededRandom(seed: options.seed ^ 0x5e77_1465_a9e5_0001)
        var taken: [String: Set<UInt64>] = [:]
        for device in fleet { taken[device.app.id, default: []].insert(UInt64(device.id.dropFirst(2), radix: 16) ?? 0) }
        let rules = DeliveryRuleScenarios(
            perCause: max(1, options.notifications / 1_000), start: start, end: options.end, taken: &taken, &ruleRandom)
        for (app, records) in rules.server { serverRecords[app, default: []] += records }
        // Listed before the campaign's, which stay last.
        expectations.insert(contentsOf: rules.expectations, at: everydayCount)

        var writer = try BundleFileWriter(directory: directory)
        for device in fleet where device.flaw != .offline {
            var records = deviceRecords[device.key] ?? []
            records.append(
                PendingRecord(
                    ts: options.end - rng.int(60_000...2_400_000), process: .app, type: "log",
                    fields: [("level", "info"), ("message", "app became active")]))
            try writer.writeDevice(device, records: records, start: start, end: options.end, &rng)
        }
        for app in SimulatedApp.all {
            try writer.writeServer(app: app, records: serverRecords[app.id] ?? [], end: options.end, &rng)
        }
        for device in rules.devices {
            var records = rules.device[device.key] ?? []
            records.append(
                PendingRecord(
                    ts: options.end - ruleRandom.int(60_000...2_400_000), process: .app, type: "log",
                    fields: [("level", "info"), ("message", "app became active")]))
            try writer.writeDevice(device, records: records, start: start, end: options.end, &ruleRandom)
        }
        var examples: [String: [SimulationSummary.Expectation]] = [:]
        for expectation in expectations where examples[expectation.cause.rawValue, default: []].count < 3 {
            examples[expectation.cause.rawValue, default: []].append(expectation)
        }
        let summary = SimulationSummary(
            seed: options.seed, notifications: expectations.count, records: writer.records,
            bundles: writer.bundles, examples: examples,
            expected: expectations.count <= 20_000 ? expectations : nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(summary).write(to: directory.appendingPathComponent("scenarios.json"))
        return summary
    }

    private static func makeFleet(_ options: SimulationOptions, _ rng: inout SeededRandom) -> [SimulatedDevice] {
        let perApp = max(4, options.notifications / (3 * 25))
        var fleet: [SimulatedDevice] = []
        for app in SimulatedApp.all {
            let flaws = [DeviceFlaw](repeating: .none, count: perApp) + DeviceFlaw.allCases.filter { $0 != .none }
            // Device IDs are 24 random bits: from about 10,000 devices an app, two would share one (and its bundle
            // files' names), so a drawn ID already taken is drawn again.
            var taken: Set<UInt64> = []
            for flaw in flaws { fleet.append(makeDevice(app: app, flaw: flaw, taken: &taken, &rng)) }
        }
        return fleet
    }

    /// A device of `app` whose ID is not in `taken` (and is added to it).
    static func makeDevice(
        app: SimulatedApp, flaw: DeviceFlaw, taken: inout Set<UInt64>,
        _ rng: inout SeededRandom
    ) -> SimulatedDevice {
        let roll = Double(rng.int(0...999)) / 1000
        let skew =
            roll < 0.8
            ? rng.int(-1_500...1_500)
            : roll < 0.9 ? 3_600_000 + rng.int(-2_000...2_000) : -rng.int(60_000...900_000)
        let version = rng.pick(app.versions)
        var id = rng.next() & 0xFF_FFFF
        while !taken.insert(id).inserted { id = rng.next() & 0xFF_FFFF }
        return SimulatedDevice(
            app: app, id: "d-" + String(id, radix: 16).leftPadded(6),
            model: rng.pick(SimulatedDevice.models), os: rng.pick(SimulatedDevice.systems),
            appVersion: version, build: String(rng.int(40...400)), skewMs: skew, flaw: flaw)
    }

    /// The devices of one app with one flaw.
    private struct DevicePool: Hashable {
        let app: String
        let flaw: DeviceFlaw
    }

    private static func pickDevice(
        for cause: Cause, app: SimulatedApp, pools: [DevicePool: [SimulatedDevice]],
        _ rng: inout SeededRandom
    ) -> SimulatedDevice {
        let flaw: DeviceFlaw =
            switch cause {
            case .categoryNotHandled: .plistDrift
            case .interactionDisabled: .interactionDisabled
            case .appGroupMismatch: .appGroupDrift
            case .awaitingDeviceLogs: .offline
            default: .none
            }
        return rng.pick(pools[DevicePool(app: app.id, flaw: flaw)]!)
    }

    /// The causes no simulated notification is written to have: an unknown one has no records, and
    /// `time_sensitive_off` only ever comes beside `held_for_summary`.
    public static let notSimulated: Set<Cause> = [.unknownNotification, .timeSensitiveOff]
    /// The causes the everyday traffic is forced through (``DeliveryRuleScenarios`` writes the others).
    static let everyday = Cause.allCases.filter { !notSimulated.contains($0) && !DeliveryRuleScenarios.causes.contains($0) }

    /// Everyday traffic: mostly fine, with the failures real apps see at realistic rates.
    private static func weightedCause(_ rng: inout SeededRandom) -> Cause {
        let weights: [(Cause, Int)] = [
            (.notExpanded, 330), (.serviceTimeout, 30), (.attachmentFailed, 25), (.serviceCrashed, 10),
            (.completionNotCalled, 10), (.apnsRejected, 10), (.dismissedBeforeUpdate, 10), (.forwardedActionUnhandled, 8),
            (.contentCrashed, 6), (.categoryUnregistered, 6), (.awaitingDeviceLogs, 5), (.notDelivered, 5),
            (.mutableContentMissing, 4), (.alertMissing, 3), (.serviceNotRun, 3), (.categoryNotHandled, 3),
            (.interactionDisabled, 3), (.appGroupMismatch, 3),
        ]
        var roll = Int(rng.int(0...999))
        for (cause, weight) in weights {
            if roll < weight { return cause }
            roll -= weight
        }
        return .ok
    }
}
