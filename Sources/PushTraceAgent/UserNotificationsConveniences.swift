// Conveniences over Apple's notification types. Not compiled on Linux (no UserNotifications there); the calls they
// wrap are the portable ones above, which the tests exercise.
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
}

extension ContentSteps {
    /// `didReceive(_ notification:)`: the user expanded `notification`.
    public func received(_ notification: UNNotification) {
        let category = notification.request.content.categoryIdentifier
        received(notification.request.identifier, category: category.isEmpty ? nil : category)
    }
}

extension AppSteps {
    /// `userNotificationCenter(_:willPresent:withCompletionHandler:)`, with the options the app answers.
    public func willPresent(_ notification: UNNotification, options: UNNotificationPresentationOptions) {
        let names: [(UNNotificationPresentationOptions, String)] = [(.banner, "banner"), (.list, "list"), (.sound, "sound"),
                                                                    (.badge, "badge")]
        willPresent(notification.request.identifier, options: names.filter { options.contains($0.0) }.map(\.1))
    }

    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)`.
    public func response(_ response: UNNotificationResponse) {
        self.response(response.notification.request.identifier, action: response.actionIdentifier)
    }
}

extension Recorder {
    /// Records the app's config (SPEC §4) with the categories registered with the notification center. Call it after
    /// `setNotificationCategories`.
    public func recordRegisteredCategories(appGroup: String?) {
        UNUserNotificationCenter.current().getNotificationCategories { categories in
            let configs = categories.map { CategoryConfig(id: $0.identifier, actions: $0.actions.map(\.identifier)) }
            self.config(appGroup: appGroup, categories: configs.sorted { $0.id < $1.id })
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

extension ContentSteps {
    /// `completion(_:action:timeout:_:)` for the handler `didReceive(_:completionHandler:)` is given.
    public func completion(_ response: UNNotificationResponse, timeout: TimeInterval = 5,
                           _ completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void)
        -> (UNNotificationContentExtensionResponseOption) -> Void {
        nonisolated(unsafe) let handler = completion
        let wrapped = self.completion(response.notification.request.identifier, action: response.actionIdentifier,
                                      timeout: timeout) { option in
            handler(switch option {
            case .doNotDismiss: .doNotDismiss
            case .dismiss: .dismiss
            case .dismissAndForwardAction: .dismissAndForwardAction
            })
        }
        return { option in
            wrapped(switch option {
            case .doNotDismiss: .doNotDismiss
            case .dismissAndForwardAction: .dismissAndForwardAction
            default: .dismiss
            })
        }
    }
}
#endif
