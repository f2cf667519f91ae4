import Foundation
import Logging
import PushTraceCore
import PushTraceStore
import ServiceLifecycle

/// Evaluates the alert rules every `interval` and exports `pushtrace_alert_firing{rule,app,category}`: 1 while a
/// rule fires for that app and category, 0 once it stops. Beside it, each app's devices of the last 7 days by their
/// notification settings, `pushtrace_audience_devices{app,group}`.
final class AlertMonitor: Service, Sendable {
    private let store: any TraceReader & StoreUpkeep
    private let blocking: BlockingWork
    private let rules: [AlertRule]
    private let interval: Duration
    private let metrics: ServerMetrics
    private let logger: Logger

    init(
        store: any TraceReader & StoreUpkeep, blocking: BlockingWork, rules: [AlertRule], interval: Duration,
        metrics: ServerMetrics, logger: Logger
    ) {
        self.store = store
        self.blocking = blocking
        self.rules = rules
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
    }

    func run() async throws {
        // On shutdown the sleep is cancelled and the loop ends: a normal stop, not an error.
        await cancelWhenGracefulShutdown {
            var exported = Exported()
            while !Task.isCancelled {
                exported = await self.evaluate(previous: exported)
                try? await Task.sleep(for: self.interval)
            }
        }
    }

    /// The series set at the last evaluation, which the next one zeroes if they are gone.
    private struct Exported {
        var firing = Set<ServerMetrics.AlertKey>()
        var audienceApps = Set<String>()
        /// Evaluations since the audience was last read: devices over a week change slowly, and reading them walks
        /// every active device's settings, so the gauge is refreshed every ``AlertMonitor/audienceEvery``
        /// evaluations (every 10 minutes at the default interval).
        var sinceAudience: Int?
    }

    /// How many evaluations apart `pushtrace_audience_devices` is read.
    static let audienceEvery = 10

    private func evaluate(previous: Exported) async -> Exported {
        let readAudience = previous.sinceAudience.map { $0 + 1 >= Self.audienceEvery } ?? true
        do {
            // With several servers on one database, one of them judges the rules and exports the gauges (whichever
            // holds the role: another takes it over once that one is gone); the others export none firing.
            // The role is held for three evaluations: a leader that died is replaced within them.
            let leads = try await blocking.run { [store, interval] in try store.leads(.alertMonitor, for: interval * 3) }
            var result: (AlertReport, [String: AudienceFigures]?)?
            if leads {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let report = try await store.alerts(rules, now: now)
                let week = ReportPeriod(label: "the last 7 days", start: now - 7 * 86_400_000, end: now)
                result = (report, readAudience ? try await store.audiences(period: week) : nil)
            }
            guard let (report, audiences) = result else {
                return Exported(
                    firing: metrics.alertsFiring([], previous: previous.firing),
                    audienceApps: metrics.audiences([:], previous: previous.audienceApps))
            }
            for alert in report.firing {
                logger.warning(
                    "alert firing",
                    metadata: [
                        "rule": "\(alert.rule)", "app": "\(alert.appID)",
                        "category": "\(alert.category)", "text": "\(alert.text)",
                    ])
            }
            var exported = previous
            exported.firing = metrics.alertsFiring(report.firing, previous: previous.firing)
            if let audiences {
                exported.audienceApps = metrics.audiences(audiences, previous: previous.audienceApps)
                exported.sinceAudience = 0
            } else {
                exported.sinceAudience = (previous.sinceAudience ?? 0) + 1
            }
            return exported
        } catch {
            logger.warning("evaluating alert rules failed; will retry", metadata: ["error": "\(error)"])
            return previous
        }
    }
}
