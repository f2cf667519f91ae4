// Periodic background upload with BGTaskScheduler, for apps whose users rarely open them. Apple-only; type-checked
// on Linux against the SDK stand-in (Tests/AppleSDKStandIn).
#if canImport(BackgroundTasks)
    import BackgroundTasks
    import Foundation
    import PushTraceAgent

    /// Registers and schedules a `BGAppRefreshTask` that runs ``Uploader/upload()`` (or ``PushTrace/upload()``).
    ///
    /// Add the identifier to the app's Info.plist under `BGTaskSchedulerPermittedIdentifiers`, and the Background Modes
    /// capability "Background fetch". Call ``register()`` before the end of `application(_:didFinishLaunchingWithOptions:)`
    /// on every launch, whether or not the agent could start (iOS terminates an app launched for a scheduled task it
    /// has no handler for), and ``schedule()`` when the app goes to the background. iOS decides when it runs.
    @available(iOSApplicationExtension, unavailable)
    public struct BackgroundUpload: Sendable {
        /// The task identifier, e.g. `net.rorklab.dailypick.pushtrace-upload`.
        public let identifier: String
        /// The uploader; nil when the agent could not start (the task then completes at once).
        public let uploader: Uploader?
        /// The earliest the next run may start after scheduling (default 4 hours).
        public var interval: TimeInterval

        public init(identifier: String, uploader: Uploader?, interval: TimeInterval = 4 * 3_600) {
            self.identifier = identifier
            self.uploader = uploader
            self.interval = interval
        }

        /// A background upload with the uploader ``PushTrace/configure(appGroup:server:token:appID:)`` set up, made
        /// when the task first runs.
        public init(identifier: String, interval: TimeInterval = 4 * 3_600) {
            self.init(identifier: identifier, uploader: nil, interval: interval)
        }

        /// Registers the launch handler, once per process (registering an identifier twice is an error iOS does not
        /// forgive). Each run schedules the next and uploads; if iOS takes the time back first, the upload is cancelled
        /// (what it did not send waits in the outbox, counted as no failure) and the task completed at once. False when
        /// BGTaskScheduler refused the identifier (missing from `BGTaskSchedulerPermittedIdentifiers`) or it was
        /// registered already.
        @discardableResult
        public func register() -> Bool {
            guard Registrations.claim(identifier) else { return false }
            let this = self
            let registered = BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                this.schedule()
                let completion = TaskCompletion(task)
                let work = Task {
                    let report = if let uploader = this.uploader { await uploader.upload() } else { await PushTrace.upload() }
                    completion.complete(success: report.map { $0.lastError == nil } ?? true)
                }
                task.expirationHandler = {
                    work.cancel()
                    completion.complete(success: false)
                }
            }
            if !registered { Registrations.release(identifier) }
            return registered
        }

        /// Asks for the next run, no earlier than `interval` from now. Errors (too many pending requests, background
        /// refresh off) are logged, not thrown: the app's own uploads go on regardless.
        public func schedule() {
            // Submitting an identifier with no registered handler raises an Objective-C exception, which no Swift
            // `catch` stops: without a registration there is nothing to schedule.
            guard Registrations.contains(identifier) else {
                _ = AgentError.badConfiguration("the background upload \(identifier) is not registered: call register() first").reported()
                return
            }
            let request = BGAppRefreshTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: interval)
            do {
                try BGTaskScheduler.shared.submit(request)
            } catch {
                _ = AgentError.badConfiguration("could not schedule the background upload \(identifier): \(error)").reported()
            }
        }
    }

    /// `setTaskCompleted(success:)` exactly once, from the upload's end or the expiration handler, whichever is first.
    private final class TaskCompletion: @unchecked Sendable {
        private let task: BGTask
        private let lock = NSLock()
        private var done = false

        init(_ task: BGTask) { self.task = task }

        func complete(success: Bool) {
            guard
                lock.withLock({ () -> Bool in
                    defer { done = true }
                    return !done
                })
            else { return }
            task.setTaskCompleted(success: success)
        }
    }

    /// The identifiers this process registered. Process-wide, as BGTaskScheduler's own registry is.
    private final class Registrations: @unchecked Sendable {
        private static let shared = Registrations()
        private let lock = NSLock()
        private var identifiers: Set<String> = []

        static func claim(_ identifier: String) -> Bool { shared.lock.withLock { shared.identifiers.insert(identifier).inserted } }
        static func release(_ identifier: String) { _ = shared.lock.withLock { shared.identifiers.remove(identifier) } }
        static func contains(_ identifier: String) -> Bool { shared.lock.withLock { shared.identifiers.contains(identifier) } }
    }
#endif
