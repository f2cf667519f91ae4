// UserNotifications as the agent and the guide use it (iOS 15+). Classes are not Sendable unless Apple's SDK says so.
@_exported import Foundation
// On Apple platforms Foundation includes URLSession; on Linux it is a module of its own.
@_exported import FoundationNetworking

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationContent: NSObject {
    open var categoryIdentifier: String { fatalError() }
    open var title: String { fatalError() }
    open var body: String { fatalError() }
    open var userInfo: [AnyHashable: Any] { fatalError() }
    open var attachments: [UNNotificationAttachment] { fatalError() }
    @available(iOS 15.0, macOS 12.0, *)
    open var interruptionLevel: UNNotificationInterruptionLevel { fatalError() }
    open override func mutableCopy() -> Any { fatalError() }
}

@available(iOS 15.0, macOS 12.0, *)
public enum UNNotificationInterruptionLevel: UInt, @unchecked Sendable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

@available(iOS 10.0, macOS 10.14, *)
public enum UNAuthorizationStatus: Int, @unchecked Sendable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    @available(iOS 12.0, macOS 10.14, *)
    case provisional = 3
    @available(iOS 14.0, *)
    @available(macOS, unavailable)
    case ephemeral = 4
}

@available(iOS 10.0, macOS 10.14, *)
public enum UNNotificationSetting: Int, @unchecked Sendable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

@available(iOS 10.0, macOS 10.14, *)
public enum UNAlertStyle: Int, @unchecked Sendable {
    case none = 0
    case banner = 1
    case alert = 2
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationSettings: NSObject {
    open var authorizationStatus: UNAuthorizationStatus { fatalError() }
    open var alertSetting: UNNotificationSetting { fatalError() }
    open var lockScreenSetting: UNNotificationSetting { fatalError() }
    open var notificationCenterSetting: UNNotificationSetting { fatalError() }
    open var alertStyle: UNAlertStyle { fatalError() }
    @available(iOS 15.0, macOS 12.0, *)
    open var scheduledDeliverySetting: UNNotificationSetting { fatalError() }
    @available(iOS 15.0, macOS 12.0, *)
    open var timeSensitiveSetting: UNNotificationSetting { fatalError() }
}

@available(iOS 10.0, macOS 10.14, *)
open class UNMutableNotificationContent: UNNotificationContent {
    open override var categoryIdentifier: String {
        get { fatalError() }
        set {}
    }
    open override var title: String {
        get { fatalError() }
        set {}
    }
    open override var body: String {
        get { fatalError() }
        set {}
    }
    open override var attachments: [UNNotificationAttachment] {
        get { fatalError() }
        set {}
    }
    @available(iOS 15.0, macOS 12.0, *)
    open override var interruptionLevel: UNNotificationInterruptionLevel {
        get { fatalError() }
        set {}
    }
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationAttachment: NSObject {
    // Runnable, for the service-extension base class's run (Tests/AppleSDKStandIn/Run): like Apple's, it refuses a
    // file that is not there, and takes the type from the file's extension.
    private var values: (identifier: String, url: URL, type: String)?
    open var identifier: String { values!.identifier }
    open var url: URL { values!.url }
    open var type: String { values!.type }
    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        guard FileManager.default.fileExists(atPath: URL.path) else { throw CocoaError(.fileNoSuchFile) }
        self.init()
        values = (identifier, URL, "public." + URL.pathExtension)
    }
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationRequest: NSObject {
    open var identifier: String { fatalError() }
    open var content: UNNotificationContent { fatalError() }
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotification: NSObject {
    open var date: Date { fatalError() }
    open var request: UNNotificationRequest { fatalError() }
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationResponse: NSObject {
    open var notification: UNNotification { fatalError() }
    open var actionIdentifier: String { fatalError() }
}

@available(iOS 10.0, macOS 10.14, *)
public let UNNotificationDefaultActionIdentifier: String = "com.apple.UNNotificationDefaultActionIdentifier"
@available(iOS 10.0, macOS 10.14, *)
public let UNNotificationDismissActionIdentifier: String = "com.apple.UNNotificationDismissActionIdentifier"

@available(iOS 10.0, macOS 10.14, *)
public struct UNNotificationActionOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationAction: NSObject {
    open var identifier: String { fatalError() }
    open var title: String { fatalError() }
    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) { fatalError() }
}

@available(iOS 10.0, macOS 10.14, *)
public struct UNNotificationCategoryOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
}

@available(iOS 10.0, macOS 10.14, *)
open class UNNotificationCategory: NSObject {
    open var identifier: String { fatalError() }
    open var actions: [UNNotificationAction] { fatalError() }
    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) { fatalError() }
}

@available(iOS 10.0, macOS 10.14, *)
public struct UNNotificationPresentationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    @available(iOS 14.0, macOS 11.0, *)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    @available(iOS 14.0, macOS 11.0, *)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

@available(iOS 10.0, macOS 10.14, *)
public struct UNAuthorizationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
}

@available(iOS 10.0, macOS 10.14, *)
open class UNUserNotificationCenter: NSObject {
    open class func current() -> UNUserNotificationCenter { fatalError() }
    weak open var delegate: (any UNUserNotificationCenterDelegate)? {
        get { fatalError() }
        set {}
    }
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {}
    open func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void) {}
    open func notificationCategories() async -> Set<UNNotificationCategory> { fatalError() }
    open func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {}
    open func notificationSettings() async -> UNNotificationSettings { fatalError() }
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool { fatalError() }
}

/// Not main-actor isolated: the system calls it on a queue of its own, and its completion handlers are `@Sendable`
/// (Apple's declarations). Swift also offers async forms of both; the guide uses the completion handlers.
@available(iOS 10.0, macOS 10.14, *)
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void)
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void)
}

extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    ) {}
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    ) {}
}

@available(iOS 10.0, macOS 11.0, *)
open class UNNotificationServiceExtension: NSObject {
    public override init() {}
    open func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {}
    open func serviceExtensionTimeWillExpire() {}
}
