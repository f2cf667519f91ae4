// An upload pass inside the background time UIKit grants. Apple-only; type-checked on Linux against the SDK
// stand-in (Tests/AppleSDKStandIn).
#if canImport(UIKit)
    import Foundation
    import UIKit

    extension Uploader {
        /// Runs ``upload()`` inside background time (`beginBackgroundTask`), so that iOS does not suspend the app
        /// mid-upload when the user leaves it; call it from `applicationDidEnterBackground(_:)` or whenever the app
        /// uploads.
        ///
        /// The pass fits the time granted: with the app in the background, it ends (each request's timeout cut to what
        /// is left) a few seconds before the time runs out. If iOS takes the time back first, the expiration handler
        /// cancels the pass, waits up to a second for it to let go of the pack lock (a process suspended holding a
        /// lock in a shared container is killed), and ends the task. What was not sent stays in the outbox, and no
        /// failure is counted.
        @available(iOSApplicationExtension, unavailable)
        @MainActor
        @discardableResult
        public func upload(in application: UIApplication) -> Task<UploadReport, Never> {
            let remaining = application.backgroundTimeRemaining
            // In the foreground the time is unbounded (`greatestFiniteMagnitude`); in the background, about 30 s.
            let within = remaining < 3_600 ? max(0, remaining - 5) : nil
            let pass = Task { within == nil ? await self.upload() : await self.upload(within: within!) }
            let time = BackgroundTime(application)
            time.begin {
                pass.cancel()
                // Not the main actor's: this thread waits here, and the pass must not need it to finish.
                let finished = DispatchSemaphore(value: 0)
                Task.detached {
                    _ = await pass.value
                    finished.signal()
                }
                _ = finished.wait(timeout: .now() + 1)
            }
            Task { @MainActor in
                _ = await pass.value
                time.end()
            }
            return pass
        }
    }

    /// One `beginBackgroundTask` ended exactly once: by the pass that finished, or by the expiration handler.
    @available(iOSApplicationExtension, unavailable)
    @MainActor
    final class BackgroundTime {
        private let application: UIApplication
        private var identifier = UIBackgroundTaskIdentifier.invalid

        init(_ application: UIApplication) { self.application = application }

        func begin(expiring: @escaping @MainActor () -> Void) {
            identifier = application.beginBackgroundTask(withName: "pushtrace upload") { [self] in
                expiring()
                end()
            }
        }

        func end() {
            guard identifier != .invalid else { return }
            application.endBackgroundTask(identifier)
            identifier = .invalid
        }
    }
#endif
