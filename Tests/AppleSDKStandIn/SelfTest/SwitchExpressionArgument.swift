// Must NOT compile: a `switch` expression passed as a function argument, which Swift rejects on every platform
// ("'switch' may only be used as expression in return, throw, or as the source of an assignment"). The agent once
// shipped this under #if canImport(UserNotificationsUI), where Linux never looked; scripts/check-apple-build.sh
// compiles this file to show that its check catches the mistake.
import UserNotificationsUI

func forward(
    _ option: UNNotificationContentExtensionResponseOption,
    to handler: (UNNotificationContentExtensionResponseOption) -> Void
) {
    handler(
        switch option {
        case .doNotDismiss: .doNotDismiss
        case .dismiss: .dismiss
        case .dismissAndForwardAction: .dismissAndForwardAction
        })
}
