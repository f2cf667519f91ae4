// An upload pass inside the background time UIKit grants. Apple-only; type-checked on Linux against the SDK
// stand-in (Tests/AppleSDKStandIn).
#if canImport(UIKit) && !os(watchOS)
    import Foundation
    import PushTraceAgent
    import UIKit
    import UserNotifications

    extension Uploader {
        /// Runs ``upload()`` inside background time (`beginBackgroundTask`), so that iOS does not suspend the app
        /// mid-upload when the user leaves it; call it from `applicationDidEnterBackground(_:)` or whenever the app
        /// uploads.
        ///
        /// In the background the pass fits the time granted: it ends (each request's timeout cut to what is left) a
        /// few seconds before that time does. If iOS takes the time back first, the expiration handler cancels the
        /// pass, refuses the pack lock to every pass of this process (packing stops between bundles), waits up to a
        /// second for the lock to be let go (iOS kills a process suspended while holding a file lock in a shared
        /// container), and ends the task. What was not sent stays in the outbox; no failure is counted. The next
        /// call to an upload method allows packing again.
        @available(iOSApplicationExtension, unavailable)
        @MainActor
        @discardableResult
        public func upload(in application: UIApplication) -> Task<UploadReport, Never> {
            let task = BackgroundPass.run(in: application) { [self] within in
                if let within { return await self.upload(within: within) }
                return await self.upload()
            }
            return Task { await task.value ?? UploadReport() }
        }
    }

    extension PushTrace {
        /// ``Uploader/upload(in:)`` with the uploader ``PushTrace/configure(appGroup:server:token:appID:)`` set up,
        /// made off the main thread at the first call; it also records the categories the app registered
        /// (``Recorder/recordRegisteredCategories(appGroup:)``), so the app needs no line for them. Call it from `applicationDidBecomeActive(_:)` and
        /// `applicationDidEnterBackground(_:)` (or SwiftUI's `scenePhase`). Its report is nil when the agent is
        /// not configured or its upload configuration was refused.
        @available(iOSApplicationExtension, unavailable)
        @MainActor
        @discardableResult
        public static func upload(in application: UIApplication) -> Task<UploadReport?, Never> {
            // The categories the app registered, as the notification center has them by now (asked at once after
            // setNotificationCategories, it may still answer with the previous set): written only when they changed.
            if let configuration { recorder?.recordRegisteredCategories(appGroup: configuration.appGroup) }
            return BackgroundPass.run(in: application) { within in
                guard let uploader = await PushTrace.uploader() else { return nil }
                if let within { return await uploader.upload(within: within) }
                return await uploader.upload()
            }
        }
    }

    extension PushTrace {
        /// Uploads each time the app becomes active and each time it goes to the background (``upload(in:)``), from
        /// UIApplication's own notifications, which a scene-based or SwiftUI app gets too: one line in
        /// `application(_:didFinishLaunchingWithOptions:)`, after ``configure(_:)``. Calling it again does nothing.
        @available(iOSApplicationExtension, unavailable)
        @MainActor
        public static func enableAutomaticUploads() { AutomaticUploads.shared.start() }
    }

    /// The observers ``PushTrace/enableAutomaticUploads()`` adds, once per process.
    @available(iOSApplicationExtension, unavailable)
    @MainActor
    final class AutomaticUploads {
        static let shared = AutomaticUploads()
        private var observers: [NSObjectProtocol] = []

        func start() {
            guard observers.isEmpty else { return }
            for name in [UIApplication.didBecomeActiveNotification, UIApplication.didEnterBackgroundNotification] {
                // Posted on the main thread, and delivered on the main queue: the main actor's.
                observers.append(
                    NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { _ in
                        MainActor.assumeIsolated { _ = PushTrace.upload(in: UIApplication.shared) }
                    })
            }
        }
    }

    /// One upload pass inside background time: `pass` is given the seconds it has (nil in the foreground).
    @available(iOSApplicationExtension, unavailable)
    @MainActor
    enum BackgroundPass {
        static func run(
            in application: UIApplication, pass work: @escaping @Sendable (TimeInterval?) async -> UploadReport?
        ) -> Task<UploadReport?, Never> {
            let time = BackgroundTime(application)
            let pass = PendingPass()
            time.begin {
                pass.task?.cancel()
                // Waits on this thread, for holders that need nothing of the main actor to let go.
                PackLockHolders.suspendAll(waitingUpTo: 1)
            }
            // Read once the task has begun, as UIKit documents; in the foreground it is unbounded.
            let remaining = application.backgroundTimeRemaining
            let within: TimeInterval? = remaining < 3_600 ? max(0, remaining - 5) : nil
            // Not the main actor's: the pass must never wait for the thread the expiration handler blocks.
            let task = Task.detached { await work(within) }
            pass.task = task
            Task { @MainActor in
                _ = await task.value
                time.end()
            }
            return task
        }
    }

    /// The pass an expiration handler cancels, set once the pass exists.
    @MainActor
    final class PendingPass {
        var task: Task<UploadReport?, Never>?
    }

    /// One `beginBackgroundTask` ended exactly once: by the pass that finished, or by the expiration handler (even
    /// one called before `beginBackgroundTask` returned).
    @available(iOSApplicationExtension, unavailable)
    @MainActor
    final class BackgroundTime {
        private let application: UIApplication
        private var identifier = UIBackgroundTaskIdentifier.invalid
        private var expired = false

        init(_ application: UIApplication) { self.application = application }

        func begin(expiring: @escaping @MainActor () -> Void) {
            identifier = application.beginBackgroundTask(withName: "pushtrace upload") { [self] in
                expiring()
                expired = true
                end()
            }
            if expired { end() }
        }

        func end() {
            guard identifier != .invalid else { return }
            application.endBackgroundTask(identifier)
            identifier = .invalid
        }
    }
#endif
