// Conveniences over Apple's notification types. Linux has no UserNotifications: these lines are type-checked there
// against a declaration-only stand-in of the SDK (Tests/AppleSDKStandIn, scripts/check-apple-build.sh); the calls
// they wrap are the portable ones, which the tests run.
#if canImport(UserNotifications)
    import Foundation
    import PushTraceRecords
    import UserNotifications

    extension ServiceSteps {
        /// `didReceive(_:withContentHandler:)` was called with `request`.
        public func received(_ request: UNNotificationRequest) {
            let category = request.content.categoryIdentifier
            received(request.identifier, category: category.isEmpty ? nil : category)
        }

        /// `didReceive(_:withContentHandler:)` was called: records `service.received` and returns the handle that
        /// records each step and calls `contentHandler` exactly once.
        public func begin(
            _ request: UNNotificationRequest,
            contentHandler: @escaping (UNNotificationContent) -> Void
        ) -> ServiceDelivery {
            let category = request.content.categoryIdentifier
            return ServiceDelivery(
                trace: begin(request.identifier, category: category.isEmpty ? nil : category),
                original: request.content, contentHandler: contentHandler)
        }
    }

    /// One notification in the service extension, with its content handler: ``deliver(_:)`` records `service.delivered`
    /// and calls the handler; ``expire()`` (from `serviceExtensionTimeWillExpire()`) records `service.expired` and
    /// delivers the best content so far. Whichever comes first wins; the handler is never called twice.
    ///
    /// After delivering, if ``Recorder/uploadsAfterDelivery(_:within:maxBytes:)`` was set, the extension sends its own
    /// records, within that bound, after the handler has been called.
    public final class ServiceDelivery: @unchecked Sendable {
        /// The notification's steps (downloads, attachments, logs).
        public let trace: ServiceTrace
        private let lock = NSLock()
        private var contentHandler: ((UNNotificationContent) -> Void)?
        private var best: UNNotificationContent

        init(trace: ServiceTrace, original: UNNotificationContent, contentHandler: @escaping (UNNotificationContent) -> Void) {
            self.trace = trace
            best = original
            self.contentHandler = contentHandler
        }

        /// The notification's request identifier.
        public var notificationID: String { trace.notificationID }

        /// Content to deliver if time runs out before ``deliver(_:)`` (the request's own content until set). A copy is
        /// kept, so later changes to `content` do not race with an expiry.
        public func keepBestAttempt(_ content: UNNotificationContent) {
            let copy = (content.copy() as? UNNotificationContent) ?? content
            lock.withLock { best = copy }
        }

        /// Records `service.delivered` and calls the content handler with `content`. The handler is called exactly once
        /// between this and ``expire()``, whichever comes first, even if the trace was ended by hand.
        public func deliver(_ content: UNNotificationContent) {
            guard let handler = takeHandler() else { return }
            trace.delivered()
            handler(content)
            uploadAfterwards()
        }

        /// `serviceExtensionTimeWillExpire()`: records `service.expired` and delivers the best attempt.
        public func expire() {
            guard let handler = takeHandler() else { return }
            trace.expired()
            handler(lock.withLock { best })
        }

        /// Downloads `url` within `timeout` seconds in all (the monotonic clock times it), keeps it under a file name
        /// with the extension the system needs to recognise the attachment (from the served MIME type, else the URL's),
        /// refuses a file over Apple's limit for its type (`AttachmentKind.maxBytes`), and makes the
        /// attachment: records `service.download` and `service.attachment`. Nil when any step failed (the records say
        /// why); the downloaded file is then removed.
        public func downloadAttachment(
            from url: URL, identifier: String = "image", timeout: TimeInterval = 20,
            session: URLSession = .shared
        ) async -> UNNotificationAttachment? {
            let started = DispatchTime.now()
            let file: URL, response: URLResponse
            do {
                (file, response) = try await Self.download(url, within: timeout, session: session)
            } catch {
                trace.download(from: url, startedAt: started, response: nil, error: error)
                return nil
            }
            let size = ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.int64Value
            trace.download(from: url, startedAt: started, response: response, bytes: size)
            let keep = file.deletingLastPathComponent().appendingPathComponent(UUID().uuidString)
            func fail(_ reason: String) -> UNNotificationAttachment? {
                trace.attachment(ok: false, bytes: size, error: reason)
                try? FileManager.default.removeItem(at: file)
                return nil
            }
            if let status = (response as? HTTPURLResponse)?.statusCode, status >= 400 {
                try? FileManager.default.removeItem(at: file)
                return nil  // the download record says it failed
            }
            // The served type first (a URL may end in `.php`, or in nothing), else the URL's own extension.
            let fileExtension = AttachmentKind.fileExtension(forMIME: response.mimeType) ?? url.pathExtension.lowercased()
            guard let kind = AttachmentKind(fileExtension: fileExtension) else {
                return fail("not an attachment type the system takes: \(response.mimeType ?? "no MIME type"), .\(url.pathExtension)")
            }
            if let size, size > kind.maxBytes {
                return fail("\(size) bytes: over the \(kind.limitText) the system takes for \(kind.rawValue) attachments")
            }
            let named = keep.appendingPathExtension(fileExtension)
            do {
                try FileManager.default.moveItem(at: file, to: named)
                let attachment = try UNNotificationAttachment(identifier: identifier, url: named, options: nil)
                trace.attachment(ok: true, uti: attachment.type, bytes: size)
                return attachment
            } catch {
                try? FileManager.default.removeItem(at: named)
                return fail((error as NSError).localizedDescription)
            }
        }

        /// `session.download(for:)`, cancelled when `seconds` run out in all.
        private static func download(_ url: URL, within seconds: TimeInterval, session: URLSession) async throws -> (URL, URLResponse) {
            let request = URLRequest(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: seconds)
            return try await withDeadline(seconds: seconds, expired: URLError(.timedOut)) { try await session.download(for: request) }
        }

        private func takeHandler() -> ((UNNotificationContent) -> Void)? {
            lock.withLock {
                defer { contentHandler = nil }
                return contentHandler
            }
        }

        /// The extension's own upload, after the handler was called. iOS may suspend an extension once it has
        /// delivered; `performExpiringActivity` asks for the time the upload needs (it is bounded anyway) and says when
        /// the system takes it back, and the upload is then cancelled, before it could hold the pack lock while suspended.
        private func uploadAfterwards() {
            let recorder = trace.recorder
            guard recorder.uploadsOwnRecords else { return }
            let upload = Task.detached(priority: .utility) { await recorder.uploadOwnRecords() }
            ProcessInfo.processInfo.performExpiringActivity(withReason: "pushtrace: sending this notification's steps") { expired in
                guard !expired else { return upload.cancel() }
                let done = DispatchSemaphore(value: 0)
                Task.detached {
                    _ = await upload.value
                    done.signal()
                }
                done.wait()
            }
        }
    }

    extension ContentSteps {
        /// `didReceive(_ notification:)`: records `content.received` and returns the card's handle.
        public func begin(_ notification: UNNotification) -> ContentCard {
            let category = notification.request.content.categoryIdentifier
            return begin(notification.request.identifier, category: category.isEmpty ? nil : category)
        }

        /// `didReceive(_ notification:)`: the user expanded `notification`.
        public func received(_ notification: UNNotification) {
            let category = notification.request.content.categoryIdentifier
            received(notification.request.identifier, category: category.isEmpty ? nil : category)
        }
    }

    extension AppSteps {
        /// `userNotificationCenter(_:willPresent:…)`, with the options the app answers.
        public func willPresent(_ notification: UNNotification, options: UNNotificationPresentationOptions) {
            let names: [(UNNotificationPresentationOptions, String)] = [
                (.banner, "banner"), (.list, "list"), (.sound, "sound"),
                (.badge, "badge"),
            ]
            willPresent(notification.request.identifier, options: names.filter { options.contains($0.0) }.map(\.1))
        }

        /// `userNotificationCenter(_:didReceive:…)`.
        public func response(_ response: UNNotificationResponse) {
            self.response(response.notification.request.identifier, action: response.actionIdentifier)
        }
    }

    extension Recorder {
        /// Records the app's config (docs/spec.md §4) with `categories`, the set the app passes to `setNotificationCategories`
        /// (reading them back at once can still return the previous set).
        public func recordCategories(_ categories: Set<UNNotificationCategory>, appGroup: String?) {
            let configs = categories.map { CategoryConfig(id: $0.identifier, actions: $0.actions.map(\.identifier)) }
            config(appGroup: appGroup, categories: configs.sorted { $0.id < $1.id })
        }

        /// Records the app's config (docs/spec.md §4) with the categories the notification center has registered now.
        public func recordRegisteredCategories(appGroup: String?) {
            UNUserNotificationCenter.current().getNotificationCategories { [self] categories in
                let configs = categories.map { CategoryConfig(id: $0.identifier, actions: $0.actions.map(\.identifier)) }
                config(appGroup: appGroup, categories: configs.sorted { $0.id < $1.id })
            }
        }

        /// Records the content extension's config (docs/spec.md §4): its `NSExtensionAttributes` from its own Info.plist, and
        /// whether it handles action buttons itself (`didReceive(_:completionHandler:)`).
        public func recordContentExtensionConfig(appGroup: String?, interactiveControls: Bool) {
            config(
                appGroup: appGroup, extensionAttributes: ContentExtensionPlist(infoDictionary: Bundle.main.infoDictionary ?? [:]),
                interactiveControls: interactiveControls)
        }
    }
#endif

#if canImport(UserNotificationsUI)
    import UserNotificationsUI

    extension ResponseOption {
        /// The agent's name for a content extension's answer.
        public init(_ option: UNNotificationContentExtensionResponseOption) {
            switch option {
            case .doNotDismiss: self = .doNotDismiss
            case .dismissAndForwardAction: self = .dismissAndForwardAction
            default: self = .dismiss
            }
        }
    }

    extension UNNotificationContentExtensionResponseOption {
        /// UIKit's option for the agent's name.
        public init(_ option: ResponseOption) {
            switch option {
            case .doNotDismiss: self = .doNotDismiss
            case .dismiss: self = .dismiss
            case .dismissAndForwardAction: self = .dismissAndForwardAction
            }
        }
    }

    extension ContentSteps {
        /// `completion(_:action:timeout:_:)` for the handler `didReceive(_:completionHandler:)` is given.
        public func completion(
            _ response: UNNotificationResponse, timeout: TimeInterval = 5,
            _ completion: @escaping @Sendable (UNNotificationContentExtensionResponseOption) -> Void
        )
            -> @Sendable (UNNotificationContentExtensionResponseOption) -> Void
        {
            let wrapped = self.completion(
                response.notification.request.identifier, action: response.actionIdentifier,
                timeout: timeout
            ) { option in
                completion(UNNotificationContentExtensionResponseOption(option))
            }
            return { option in wrapped(ResponseOption(option)) }
        }

        /// The `async` action handler, `didReceive(_ response:) async -> UNNotificationContentExtensionResponseOption`:
        /// runs `work`, then records `content.action` with the option it returns and how long it took (or
        /// `content.completion_timeout` once it has taken longer than `timeout` seconds).
        public func action(
            _ response: UNNotificationResponse, timeout: TimeInterval = 5,
            isolation: isolated (any Actor)? = #isolation,
            _ work: () async -> UNNotificationContentExtensionResponseOption
        ) async
            -> UNNotificationContentExtensionResponseOption
        {
            let option = await action(
                response.notification.request.identifier, action: response.actionIdentifier,
                timeout: timeout, isolation: isolation
            ) { ResponseOption(await work()) }
            return UNNotificationContentExtensionResponseOption(option)
        }
    }
#endif
