import PushTraceCore
import PushTraceRecords

/// What settling reads of an engine beside the summaries (``Settling``): the config in force, a device's latest
/// upload, and the stored lines of the notifications a summary cannot decide.
package protocol DiagnosisSource {
    associatedtype NeighbourSession: SQLSession
    /// The session ``neighbours(appID:deviceID:sentAfter:)`` reads summaries with.
    var neighbourSession: NeighbourSession { get }
    /// The config record of each process in force at `at` on the device (``DiagnosisAssembly/configuredProcesses``).
    func configs(appID: String, deviceID: String, at: Int64) async throws -> [ProcessKind: StoredConfig]
    /// The corrected time of the device's latest upload, or nil when none is stored.
    func lastSeen(appID: String, deviceID: String) async throws -> Int64?
    /// The stored lines of each notification, in the order of `keys`, each up to ``StoredLineReader/blockLimit``
    /// blocks.
    func lines(of keys: [NotificationRowKey]) async throws -> [[StoredLine]]
}

/// An unsettled notification's summary, as read to be settled.
package struct Unsettled: Sendable {
    package var key: NotificationRowKey
    package var facts: NotificationFacts

    package init(key: NotificationRowKey, facts: NotificationFacts) {
        self.key = key
        self.facts = facts
    }
}

/// A cause decided, with the summary it was decided from: written only if the summary is still that one.
package struct Settled: Sendable {
    package var key: NotificationRowKey
    package var facts: NotificationFacts
    package var cause: Cause
}

/// Settling, the same in every engine: each cause decided from the notification's summary where it can be
/// (``Diagnoser/cause(of:config:lastSeen:)``), else from its records as `why` reads them; then written with the
/// rollup counts it adds. How notifications are claimed and spread over threads or servers is each engine's.
package enum Settling {
    /// The cause of each summary, in the order given; the records of those the summary cannot decide are read
    /// together (``DiagnosisSource/lines(of:)``).
    package static func decide(
        _ batch: [Unsettled], diagnoser: Diagnoser, source: some DiagnosisSource
    ) throws -> [Settled] {
        try InlineExecutor.run { try await deciding(batch, diagnoser: diagnoser, source: source) }
    }

    /// ``decide(_:diagnoser:source:)``, as the store's SQL is written; run inline on the settling session.
    private static func deciding(
        _ batch: [Unsettled], diagnoser: Diagnoser, source: some DiagnosisSource
    ) async throws -> [Settled] {
        var causes: [Cause?] = []
        for item in batch {
            // The summary's rules read the config in force and the last upload only when they need them.
            causes.append(
                try await diagnoser.cause(
                    of: item.facts.folded,
                    config: { try await DiagnosisAssembly.configInForce(source.configs(appID: item.key.appID, deviceID: $0, at: $1)) },
                    lastSeen: { try await source.lastSeen(appID: item.key.appID, deviceID: $0) }))
        }
        let undecided = causes.indices.filter { causes[$0] == nil }
        if !undecided.isEmpty {
            let lines = try await source.lines(of: undecided.map { batch[$0].key })
            for (index, at) in undecided.enumerated() {
                let key = batch[at].key
                let input = try await DiagnosisAssembly.input(
                    appID: key.appID, notificationID: key.notificationID, lines: lines[index],
                    configs: { try await source.configs(appID: key.appID, deviceID: $0, at: $1) },
                    lastSeen: { try await source.lastSeen(appID: key.appID, deviceID: $0) },
                    neighbours: { try await source.neighbours(appID: key.appID, deviceID: $0, sentAfter: $1) })
                causes[at] = diagnoser.diagnose(input).cause
            }
        }
        return zip(batch, causes).map { Settled(key: $0.key, facts: $0.facts, cause: $1!) }
    }
}

extension SQLSession {
    /// Writes each cause where its notification is still unsettled and its summary still the one the cause was
    /// decided from (as many records): a summary that changed meanwhile stays pending for the next pass. Adds the
    /// rollup counts of those written to `rollups`, in the order given (the last settled into a rollup row is its
    /// example). Returns how many were written.
    package func writeCauses(_ settled: [Settled], rollups: RollupDeltas) throws -> Int {
        var written = 0
        for start in stride(from: 0, to: settled.count, by: 500) {
            let chunk = settled[start..<min(start + 500, settled.count)]
            let values = SQLStatement.joined(
                chunk.map { "(\($0.key.appID), \($0.key.notificationID), \($0.cause.rawValue), \($0.facts.records))" },
                separator: ", ")
            var changed = Set<NotificationRowKey>()
            for row in try rows(
                """
                UPDATE\(unsafeRaw: dialect.orFail) notification SET cause = k.column3 FROM (VALUES \(values)) AS k
                WHERE notification.app_id = k.column1 AND notification.notification_id = k.column2
                    AND notification.cause IS NULL AND notification.records = k.column4
                RETURNING notification.app_id, notification.notification_id
                """)
            {
                changed.insert(
                    NotificationRowKey(appID: try row.decode("app_id"), notificationID: try row.decode("notification_id")))
            }
            for item in chunk where changed.contains(item.key) {
                rollups.add(
                    appID: item.key.appID, notificationID: item.key.notificationID, facts: item.facts,
                    cause: item.cause.rawValue, sign: 1)
            }
            written += changed.count
        }
        return written
    }
}
