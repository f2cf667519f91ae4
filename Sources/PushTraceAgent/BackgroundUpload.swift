// Periodic background upload with BGTaskScheduler, for apps whose users rarely open them. Apple-only; type-checked
// on Linux against the SDK stand-in (Tests/AppleSDKStandIn).
#if canImport(BackgroundTasks)
import BackgroundTasks
import Foundation

/// Registers and schedules a `BGAppRefreshTask` that runs ``Uploader/upload()``.
///
/// Add the identifier to the app's Info.plist under `BGTaskSchedulerPermittedIdentifiers`, and the Background Modes
/// capability "Background fetch". Call ``register()`` before the end of `application(_:didFinishLaunchingWithOptions:)`
/// (BGTaskScheduler's rule), and ``schedule()`` when the app goes to the background. iOS decides when it runs.
public struct BackgroundUpload: Sendable {
    /// The task identifier, e.g. `net.rorklab.dailypick.pushtrace-upload`.
    public let identifier: String
    public let uploader: Uploader
    /// The earliest the next run may start after scheduling (default 4 hours).
    public var interval: TimeInterval

    public init(identifier: String, uploader: Uploader, interval: TimeInterval = 4 * 3_600) {
        self.identifier = identifier
        self.uploader = uploader
        self.interval = interval
    }

    /// Registers the launch handler: each run schedules the next, uploads, and completes; if iOS takes the time
    /// back first, the upload is cancelled (what it did not send waits in the outbox, counted as no failure).
    /// False when BGTaskScheduler refused the identifier (missing from `BGTaskSchedulerPermittedIdentifiers`).
    @discardableResult
    public func register() -> Bool {
        let this = self
        return BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            this.schedule()
            let work = Task { await this.uploader.upload() }
            task.expirationHandler = { work.cancel() }
            nonisolated(unsafe) let finishing = task
            Task {
                let report = await work.value
                finishing.setTaskCompleted(success: report.lastError == nil)
            }
        }
    }

    /// Asks for the next run, no earlier than `interval` from now. Errors (too many pending requests, background
    /// refresh off) are logged, not thrown: the app's own uploads go on regardless.
    public func schedule() {
        let request = BGAppRefreshTaskRequest(identifier: identifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: interval)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            _ = AgentError.badConfiguration("could not schedule the background upload \(identifier): \(error)").reported()
        }
    }
}
#endif
