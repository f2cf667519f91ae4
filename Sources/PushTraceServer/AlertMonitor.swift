import Foundation
import Logging
import PushTraceCore
import PushTraceStore
import ServiceLifecycle

/// Evaluates the alert rules every `interval` and exports `pushtrace_alert_firing{rule,app,category}`: 1 while a
/// rule fires for that app and category, 0 once it stops.
final class AlertMonitor: Service, Sendable {
    private let store: any TraceReader & StoreUpkeep
    private let rules: [AlertRule]
    private let interval: Duration
    private let metrics: ServerMetrics
    private let logger: Logger

    init(store: any TraceReader & StoreUpkeep, rules: [AlertRule], interval: Duration, metrics: ServerMetrics, logger: Logger) {
        self.store = store
        self.rules = rules
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
    }

    func run() async throws {
        // On shutdown the sleep is cancelled and the loop ends: a normal stop, not an error.
        await cancelWhenGracefulShutdown {
            var firing = Set<ServerMetrics.AlertKey>()
            while !Task.isCancelled {
                firing = await self.evaluate(previous: firing)
                try? await Task.sleep(for: self.interval)
            }
        }
    }

    private func evaluate(previous: Set<ServerMetrics.AlertKey>) async -> Set<ServerMetrics.AlertKey> {
        do {
            // With several servers on one database, one of them judges the rules and exports the gauge (whichever
            // holds the role: another takes it over once that one is gone); the others export none firing.
            let report = try await BlockingWork.run { [store, rules] () -> AlertReport? in
                guard try store.leads(.alertMonitor) else { return nil }
                return try store.alerts(rules, now: Int64(Date().timeIntervalSince1970 * 1000))
            }
            guard let report else { return metrics.alertsFiring([], previous: previous) }
            for alert in report.firing {
                logger.warning(
                    "alert firing",
                    metadata: [
                        "rule": "\(alert.rule)", "app": "\(alert.appID)",
                        "category": "\(alert.category)", "text": "\(alert.text)",
                    ])
            }
            return metrics.alertsFiring(report.firing, previous: previous)
        } catch {
            logger.warning("evaluating alert rules failed; will retry", metadata: ["error": "\(error)"])
            return previous
        }
    }
}
