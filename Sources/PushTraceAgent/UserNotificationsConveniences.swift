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

    /// One notification in the service extension, with its content handler (``ServiceHandle``): ``ServiceHandle/deliver(_:)``
    /// records `service.delivered` and calls the handler; ``ServiceHandle/expire()`` (from
    /// `serviceExtensionTimeWillExpire()`) records `service.expired` and delivers the best content so far.
    public typealias ServiceDelivery = ServiceHandle<UNNotificationContent>

    extension ServiceHandle where Content == UNNotificationContent {
        convenience init(
            trace: ServiceTrace, original: UNNotificationContent, contentHandler: @escaping (UNNotificationContent) -> Void
        ) {
            self.init(
                trace: trace, original: original, copy: { ($0.copy() as? UNNotificationContent) ?? $0 },
                level: { InterruptionLevel($0.interruptionLevel)?.rawValue }, contentHandler: contentHandler)
        }

        /// Downloads `url` (``ServiceHandle/downloadMedia(from:timeout:session:)``) and makes the attachment: records
        /// `service.download` and `service.attachment`. Nil when any step failed (the records say why); the
        /// downloaded file is then removed.
        public func downloadAttachment(
            from url: URL, identifier: String = "image", timeout: TimeInterval = 20,
            session: URLSession = .shared
        ) async -> UNNotificationAttachment? {
            guard let media = await downloadMedia(from: url, timeout: timeout, session: session) else { return nil }
            return attachment(media, identifier: identifier)
        }

        /// The attachment for a downloaded file: records `service.attachment`; nil (the file removed) when the
        /// system refuses it.
        func attachment(_ media: DownloadedMedia, identifier: String) -> UNNotificationAttachment? {
            do {
                let attachment = try UNNotificationAttachment(identifier: identifier, url: media.file, options: nil)
                trace.attachment(ok: true, uti: attachment.type, bytes: media.bytes)
                return attachment
            } catch {
                trace.attachment(ok: false, bytes: media.bytes, error: (error as NSError).localizedDescription)
                try? FileManager.default.removeItem(at: media.file)
                return nil
            }
        }
    }

    /// A Notification Service Extension that records and delivers by itself: an NSE whose only job is rich media
    /// subclasses it and overrides ``configuration`` (docs/agent.md §3). It records `service.received`, downloads
    /// the media the payload names (``mediaURL(in:)``: `image-url`, `media-url`, `attachment-url`, `image`,
    /// OneSignal's `att`, Firebase's `fcm_options.image`), attaches it, and delivers; on
    /// `serviceExtensionTimeWillExpire()` it delivers the best attempt. An NSE that rewrites content overrides
    /// ``content(for:delivery:)``.
    open class PushTraceServiceExtension: UNNotificationServiceExtension {
        private let lock = NSLock()
        /// The notifications this instance is delivering, by request identifier: iOS does not promise an instance
        /// per notification.
        private var deliveries: [String: ServiceDelivery] = [:]

        /// The set-up this extension configures the agent with, at its first notification; nil when the process
        /// configures it another way (``PushTrace/configure(appGroup:server:token:appID:)``), or not at all (it then
        /// only delivers).
        open var configuration: PushTrace.Configuration? { nil }

        /// How long the media download may take in all, in seconds (default 20 of the roughly 30 iOS grants).
        open var downloadTimeout: TimeInterval { 20 }

        open override func didReceive(
            _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
        ) {
            if let configuration { PushTrace.configure(configuration) }
            // Not configured, it still delivers through the hook; its records are only counted, never written.
            let recorder = PushTrace.recorder ?? Recorder(process: .service, place: .unusable)
            let identifier = request.identifier
            let delivery = recorder.service.begin(request) { [weak self] content in
                _ = self?.lock.withLock { self?.deliveries.removeValue(forKey: identifier) }
                contentHandler(content)
            }
            lock.withLock { deliveries[identifier] = delivery }
            // iOS calls this instance once per notification and holds it until the handler runs; the hook reads
            // only what the subclass gives it, so handing both to the task is safe though neither is Sendable.
            nonisolated(unsafe) let request = request
            nonisolated(unsafe) let this = self
            Task { delivery.deliver(await this.content(for: request, delivery: delivery)) }
        }

        open override func serviceExtensionTimeWillExpire() {
            for delivery in lock.withLock({ Array(deliveries.values) }) { delivery.expire() }
        }

        /// The content to deliver; runs off the main thread. By default the request's content with the media
        /// ``mediaURL(in:)`` names attached (the request's own content when there is none, or it fails; the records
        /// say why). An override that rewrites content calls ``ServiceHandle/keepBestAttempt(_:)`` with what it has so
        /// far, and may call `delivery.downloadAttachment(from:)`.
        open func content(for request: UNNotificationRequest, delivery: ServiceDelivery) async -> UNNotificationContent {
            await delivery.contentWithMedia(from: mediaURL(in: request.content), timeout: downloadTimeout) { media in
                guard let attachment = delivery.attachment(media, identifier: "image"),
                    let content = request.content.mutableCopy() as? UNMutableNotificationContent
                else { return nil }
                content.attachments = [attachment]
                return content
            }
        }

        /// The media URL the payload names: the keys above, outside `aps`.
        open func mediaURL(in content: UNNotificationContent) -> URL? { MediaURL.find(in: content.userInfo) }
    }

    /// The content extension's two entry points, recorded: make one per view controller
    /// (`PushTraceContentExtension(.dailyPick)`), then ``received(_:)`` from `didReceive(_ notification:)` and
    /// ``completion(_:_:)`` from `didReceive(_:completionHandler:)` (docs/agent.md §4). Configuring the agent and
    /// recording this extension's `Info.plist` attributes happen once per process, off the main thread.
    public struct PushTraceContentExtension: Sendable {
        /// The recorder, nil when the agent is not configured.
        public let recorder: Recorder?

        /// - Parameters:
        ///   - configuration: the agent's set-up (``PushTrace/configure(_:)``); nil when the process configured it.
        ///   - interactiveControls: whether the extension answers its action buttons itself.
        public init(_ configuration: PushTrace.Configuration? = nil, interactiveControls: Bool = true) {
            if let configuration { PushTrace.configure(configuration) }
            recorder = PushTrace.recorder
            recorder?.recordContentExtensionConfig(
                appGroup: PushTrace.configuration?.appGroup, interactiveControls: interactiveControls)
        }

        /// `didReceive(_ notification:)`: records `content.received`; the card's handle says when it is ready.
        public func received(_ notification: UNNotification) -> ContentCard? { recorder?.content.begin(notification) }
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
        /// Records the app's config (docs/protocol.md#config-records) with `categories`, the set the app passes to `setNotificationCategories`
        /// (reading them back at once can still return the previous set).
        public func recordCategories(_ categories: Set<UNNotificationCategory>, appGroup: String?) {
            let configs = categories.map { CategoryConfig(id: $0.identifier, actions: $0.actions.map(\.identifier)) }
            config(appGroup: appGroup, categories: configs.sorted { $0.id < $1.id })
        }

        /// Records the app's config (docs/protocol.md) with the categories the notification center has registered now
        /// and the user's notification settings (`notificationSettings()`), both asked off the calling thread: a
        /// record is written only when they changed.
        public func recordRegisteredCategories(appGroup: String?) {
            UNUserNotificationCenter.current().getNotificationCategories { [self] categories in
                let configs = categories.map { CategoryConfig(id: $0.identifier, actions: $0.actions.map(\.identifier)) }
                UNUserNotificationCenter.current().getNotificationSettings { [self] settings in
                    config(
                        appGroup: appGroup, categories: configs.sorted { $0.id < $1.id },
                        notificationSettings: NotificationSettings(settings))
                }
            }
        }

        /// Records the content extension's config (docs/protocol.md#config-records): its `NSExtensionAttributes` from its own Info.plist, and
        /// whether it handles action buttons itself (`didReceive(_:completionHandler:)`).
        public func recordContentExtensionConfig(appGroup: String?, interactiveControls: Bool) {
            config(
                appGroup: appGroup, extensionAttributes: ContentExtensionPlist(infoDictionary: Bundle.main.infoDictionary ?? [:]),
                interactiveControls: interactiveControls)
        }
    }

    // Apple's enums are open to new cases: each switch names all but one and lets `default` tell that one from a
    // case this version does not know, which it leaves out (unknown). The same code compiles without a warning
    // against the SDK and against the stand-in.
    extension NotificationSettings {
        /// The settings as `UNUserNotificationCenter.notificationSettings()` gives them; a value this version does not
        /// know is left out (unknown).
        public init(_ settings: UNNotificationSettings) {
            self.init()
            let status = settings.authorizationStatus
            switch status {
            case .notDetermined: authorization = Authorization.notDetermined.rawValue
            case .denied: authorization = Authorization.denied.rawValue
            case .authorized: authorization = Authorization.authorized.rawValue
            case .provisional: authorization = Authorization.provisional.rawValue
            default:
                // Ephemeral authorization (App Clips) exists on iOS only.
                #if os(iOS)
                    authorization = status == .ephemeral ? Authorization.ephemeral.rawValue : nil
                #else
                    authorization = nil
                #endif
            }
            alert = Self.name(settings.alertSetting)
            lockScreen = Self.name(settings.lockScreenSetting)
            notificationCenter = Self.name(settings.notificationCenterSetting)
            let style = settings.alertStyle
            switch style {
            case .none: alertStyle = AlertStyle.none.rawValue
            case .banner: alertStyle = AlertStyle.banner.rawValue
            default: alertStyle = style == .alert ? AlertStyle.alert.rawValue : nil
            }
            scheduledDelivery = Self.name(settings.scheduledDeliverySetting)
            timeSensitive = Self.name(settings.timeSensitiveSetting)
        }

        private static func name(_ setting: UNNotificationSetting) -> String? {
            switch setting {
            case .notSupported: Setting.notSupported.rawValue
            case .disabled: Setting.disabled.rawValue
            default: setting == .enabled ? Setting.enabled.rawValue : nil
            }
        }
    }

    extension InterruptionLevel {
        /// The level of `UNNotificationInterruptionLevel`; nil for one this version does not know.
        public init?(_ level: UNNotificationInterruptionLevel) {
            switch level {
            case .passive: self = .passive
            case .active: self = .active
            case .timeSensitive: self = .timeSensitive
            default:
                guard level == .critical else { return nil }
                self = .critical
            }
        }
    }
#endif

#if canImport(UserNotificationsUI)
    import UserNotificationsUI

    extension PushTraceContentExtension {
        /// `didReceive(_:completionHandler:)`: wraps the completion handler (``ContentSteps/completion(_:action:timeout:_:)``),
        /// which records `content.action` with the answer and how long it took, or `content.completion_timeout`
        /// past `timeout` seconds; `completion` itself when the agent is not configured.
        public func completion(
            _ response: UNNotificationResponse, timeout: TimeInterval = 5,
            _ completion: @escaping @Sendable (UNNotificationContentExtensionResponseOption) -> Void
        ) -> @Sendable (UNNotificationContentExtensionResponseOption) -> Void {
            recorder?.content.completion(response, timeout: timeout, completion) ?? completion
        }
    }

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
