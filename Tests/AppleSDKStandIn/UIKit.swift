// The few UIKit types the guide's samples use: a content extension is a UIViewController; the app has a delegate.
@_exported import Foundation
// On Apple platforms Foundation includes URLSession; on Linux it is a module of its own.
@_exported import FoundationNetworking

@MainActor open class UIResponder: NSObject {
    public override init() {}
}

@MainActor open class UIView: UIResponder {}

@MainActor open class UIImage: NSObject {
    public init?(contentsOfFile path: String) { fatalError() }
    open var size: CGSize { fatalError() }
    open var scale: CGFloat { fatalError() }
    /// iOS 15.
    @available(iOS 15.0, *)
    open func preparingThumbnail(of size: CGSize) -> UIImage? { fatalError() }
}

@MainActor open class UIImageView: UIView {
    open var image: UIImage? {
        get { fatalError() }
        set {}
    }
}

@MainActor open class UILabel: UIView {
    open var text: String? {
        get { fatalError() }
        set {}
    }
}

@MainActor open class UIViewController: UIResponder {
    open var view: UIView! {
        get { fatalError() }
        set {}
    }
    open func viewDidLoad() {}
}

public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

@MainActor open class UIApplication: UIResponder {
    public struct LaunchOptionsKey: Hashable, RawRepresentable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }
    @available(iOS 2.0, *)
    nonisolated public static let didBecomeActiveNotification = Notification.Name("UIApplicationDidBecomeActiveNotification")
    @available(iOS 4.0, *)
    nonisolated public static let didEnterBackgroundNotification = Notification.Name("UIApplicationDidEnterBackgroundNotification")
    @available(iOSApplicationExtension, unavailable)
    open class var shared: UIApplication { fatalError() }
    @available(iOSApplicationExtension, unavailable)
    open func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    )
        -> UIBackgroundTaskIdentifier
    { fatalError() }
    open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}
    /// `greatestFiniteMagnitude` while the app is in the foreground.
    open var backgroundTimeRemaining: TimeInterval { fatalError() }
}

@MainActor public protocol UIApplicationDelegate: NSObjectProtocol {
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool
    func applicationDidBecomeActive(_ application: UIApplication)
    func applicationDidEnterBackground(_ application: UIApplication)
}

extension UIApplicationDelegate {
    public func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool { true }
    public func applicationDidBecomeActive(_ application: UIApplication) {}
    public func applicationDidEnterBackground(_ application: UIApplication) {}
    /// What `@main` on an application delegate calls (UIApplicationMain).
    public static func main() {}
}
