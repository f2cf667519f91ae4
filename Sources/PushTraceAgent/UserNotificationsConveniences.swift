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
    public func begin(_ request: UNNotificationRequest,
                      contentHandler: @escaping (UNNotificationContent) -> Void) -> ServiceDelivery {
        let category = request.content.categoryIdentifier
        return ServiceDelivery(trace: begin(request.identifier, category: category.isEmpty ? nil : category),
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

    /// Content to deliver if time runs out before ``deliver(_:)`` (the request's own content until set).
    public func keepBestAttempt(_ content: UNNotificationContent) {
        lock.withLock { best = content }
    }

    /// Records `service.delivered` and calls the content handler with `content`; does nothing after the first
    /// delivery or expiry.
    public func deliver(_ content: UNNotificationContent) {
        guard let handler = takeHandler(), trace.delivered() else { return }
        handler(content)
        uploadAfterwards()
    }

    /// `serviceExtensionTimeWillExpire()`: records `service.expired` and delivers the best attempt.
    public func expire() {
        guard let handler = takeHandler(), trace.expired() else { return }
        handler(lock.withLock { best })
    }

    /// Downloads `url` (the monotonic clock times it; at most `timeout` seconds), keeps it under a file name with
    /// the extension the system needs to recognise an attachment, and makes the attachment: records
    /// `service.download` and `service.attachment`. Nil when either failed (the steps say why).
    public func downloadAttachment(from url: URL, identifier: String = "image", timeout: TimeInterval = 20,
                                   session: URLSession = .shared) async -> UNNotificationAttachment? {
        let started = DispatchTime.now()
        var request = URLRequest(url: url)
        request.timeoutInterval = timeout
        let file: URL, response: URLResponse
        do {
            (file, response) = try await session.download(for: request)
        } catch {
            trace.download(from: url, startedAt: started, response: nil, error: error)
            return nil
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 200
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber
        trace.download(from: url, startedAt: started, response: response, bytes: size?.int64Value)
        guard status < 400 else { return nil }
        let suffix = url.pathExtension.isEmpty ? Self.fileExtension(mime: response.mimeType) : url.pathExtension
        let named = file.deletingLastPathComponent().appendingPathComponent(UUID().uuidString + "." + suffix)
        do {
            try FileManager.default.moveItem(at: file, to: named)
            let attachment = try UNNotificationAttachment(identifier: identifier, url: named, options: nil)
            trace.attachment(ok: true, uti: attachment.type, bytes: size?.int64Value)
            return attachment
        } catch {
            trace.attachment(ok: false, bytes: size?.int64Value, error: (error as NSError).localizedDescription)
            return nil
        }
    }

    /// The file extension UNNotificationAttachment needs for a served MIME type (a URL without one).
    static func fileExtension(mime: String?) -> String {
        switch mime?.lowercased() {
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/heic": "heic"
        case "video/mp4": "mp4"
        case "audio/mpeg": "mp3"
        default: "jpg"
        }
    }

    private func takeHandler() -> ((UNNotificationContent) -> Void)? {
        lock.withLock {
            defer { contentHandler = nil }
            return contentHandler
        }
    }

    private func uploadAfterwards() {
        let recorder = trace.recorder
        Task.detached(priority: .utility) { await recorder.uploadOwnRecords() }
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
        let names: [(UNNotificationPresentationOptions, String)] = [(.banner, "banner"), (.list, "list"), (.sound, "sound"),
                                                                    (.badge, "badge")]
        willPresent(notification.request.identifier, options: names.filter { options.contains($0.0) }.map(\.1))
    }

    /// `userNotificationCenter(_:didReceive:…)`.
    public func response(_ response: UNNotificationResponse) {
        self.response(response.notification.request.identifier, action: response.actionIdentifier)
    }
}

extension Recorder {
    /// Records the app's config (SPEC §4) with the categories registered with the notification center. Call it after
    /// `setNotificationCategories`.
    public func recordRegisteredCategories(appGroup: String?) {
        UNUserNotificationCenter.current().getNotificationCategories { [self] categories in
            let configs = categories.map { CategoryConfig(id: $0.identifier, actions: $0.actions.map(\.identifier)) }
            config(appGroup: appGroup, categories: configs.sorted { $0.id < $1.id })
        }
    }

    /// Records the content extension's config (SPEC §4): its `NSExtensionAttributes` from its own Info.plist, and
    /// whether it handles action buttons itself (`didReceive(_:completionHandler:)`).
    public func recordContentExtensionConfig(appGroup: String?, interactiveControls: Bool) {
        config(appGroup: appGroup, extensionAttributes: ContentExtensionPlist(infoDictionary: Bundle.main.infoDictionary ?? [:]),
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
    public func completion(_ response: UNNotificationResponse, timeout: TimeInterval = 5,
                           _ completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void)
        -> (UNNotificationContentExtensionResponseOption) -> Void {
        nonisolated(unsafe) let handler = completion
        let wrapped = self.completion(response.notification.request.identifier, action: response.actionIdentifier,
                                      timeout: timeout) { option in
            handler(UNNotificationContentExtensionResponseOption(option))
        }
        return { option in wrapped(ResponseOption(option)) }
    }

    /// The `async` action handler, `didReceive(_ response:) async -> UNNotificationContentExtensionResponseOption`:
    /// runs `work`, then records `content.action` with the option it returns and how long it took (or
    /// `content.completion_timeout` once it has taken longer than `timeout` seconds).
    public func action(_ response: UNNotificationResponse, timeout: TimeInterval = 5,
                       isolation: isolated (any Actor)? = #isolation,
                       _ work: () async -> UNNotificationContentExtensionResponseOption) async
        -> UNNotificationContentExtensionResponseOption {
        let option = await action(response.notification.request.identifier, action: response.actionIdentifier,
                                  timeout: timeout, isolation: isolation) { ResponseOption(await work()) }
        return UNNotificationContentExtensionResponseOption(option)
    }
}
#endif
