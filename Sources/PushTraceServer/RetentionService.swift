import Foundation
import Logging
import NIOConcurrencyHelpers
import PushTraceStore
import ServiceLifecycle

/// Deletes data older than the retention period at start and then every `interval`, on a thread of its own, in
/// the small transactions `TraceStore.deleteExpired` makes: ingest commits between them. A graceful shutdown stops a
/// pass after its current transaction.
final class RetentionService: Service, Sendable {
    private let store: any StoreUpkeep
    private let days: Int
    private let interval: Duration
    private let logger: Logger

    init(store: any StoreUpkeep, days: Int, interval: Duration = .seconds(3_600), logger: Logger) {
        self.store = store
        self.days = days
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.prune()
                try? await Task.sleep(for: self.interval)
            }
        }
    }

    private func prune() async {
        let stop = NIOLockedValueBox(false)
        let cutoff = Int64(Date().timeIntervalSince1970 * 1000) - Int64(days) * 86_400_000
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread { [store, logger] in
                    Thread.current.name = "pt-retention"
                    do {
                        let report = try store.deleteExpired(before: cutoff, batchSize: 1_000) { _ in !stop.withLockedValue { $0 } }
                        if report != RetentionReport() {
                            logger.info(
                                "retention: deleted data older than the cut-off",
                                metadata: ["days": "\(self.days)", "deleted": "\(report)"])
                        }
                    } catch {
                        logger.warning("retention pass failed; will retry", metadata: ["error": "\(error)"])
                    }
                    continuation.resume()
                }.start()
            }
        } onCancel: {
            stop.withLockedValue { $0 = true }
        }
    }
}
