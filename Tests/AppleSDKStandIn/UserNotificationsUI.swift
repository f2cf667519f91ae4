// The content extension's protocol (Apple's UNNotificationContentExtension reference).
@_exported import UIKit
@_exported import UserNotifications

@available(iOS 10.0, macCatalyst 14.0, *)
public enum UNNotificationContentExtensionResponseOption: UInt, Sendable {
    case doNotDismiss = 0
    case dismiss = 1
    case dismissAndForwardAction = 2
}

@available(iOS 10.0, macCatalyst 14.0, *)
public enum UNNotificationContentExtensionMediaPlayPauseButtonType: UInt, Sendable {
    case none = 0
    case `default` = 1
    case overlay = 2
}

/// `didReceive(_ notification:)` is main-actor isolated; the action handler is not, and its completion is
/// `@Sendable` (Apple's declarations). Swift also offers the handler's async form.
@available(iOS 10.0, macCatalyst 14.0, *)
public protocol UNNotificationContentExtension: NSObjectProtocol {
    @MainActor func didReceive(_ notification: UNNotification)
    func didReceive(
        _ response: UNNotificationResponse,
        completionHandler completion: @escaping @Sendable (UNNotificationContentExtensionResponseOption) -> Void)
}

extension UNNotificationContentExtension {
    public func didReceive(
        _ response: UNNotificationResponse,
        completionHandler completion: @escaping @Sendable (UNNotificationContentExtensionResponseOption) -> Void
    ) {}
}
