import Foundation
import Logging
import PushTraceStore

/// Settles the causes of notifications whose records changed, a step at a time by the main writer, and keeps
/// the notifications-by-cause gauge current. Settling is done when the writer is idle rather than after every
/// commit: a notification's bundles arrive over minutes, and each is diagnosed once its records have settled, not
/// once per bundle. Used by that writer only.
final class CauseSettler {
    private let store: any TraceWriter & TraceReader
    private let settings: ServerSettings
    private let metrics: ServerMetrics
    private let logger: Logger
    private var gaugeKeys = Set<CauseSeriesKey>()
    private var gaugeRefreshed = Date.distantPast
    private(set) var lastSettled = Date()

    init(store: any TraceWriter & TraceReader, settings: ServerSettings, metrics: ServerMetrics, logger: Logger) {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Whether causes are due under steady load (the writer is never idle for long).
    var isDue: Bool { Date().timeIntervalSince(lastSettled) >= IngestTiming.settleInterval }

    /// Diagnoses up to `settleStep` notifications whose records changed. Runs on its writer's executor.
    nonisolated(nonsending) func step() async {
        lastSettled = Date()
        do {
            let settled = try store.settleCauses(limit: settings.settleStep)
            // The gauge reads the hourly rollup (a few thousand rows): refresh it soon after causes change.
            let sinceRefresh = Date().timeIntervalSince(gaugeRefreshed)
            if sinceRefresh >= IngestTiming.causeGaugeInterval || (settled > 0 && sinceRefresh >= IngestTiming.causeGaugeAfterChange) {
                gaugeRefreshed = Date()
                let since = Int64(Date().timeIntervalSince1970 * 1000) - IngestTiming.causeGaugeWindowMs
                gaugeKeys = metrics.notificationsByCause(
                    try await store.causeCounts(since: since),
                    previous: gaugeKeys)
            }
        } catch {
            logger.warning("settling causes failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
