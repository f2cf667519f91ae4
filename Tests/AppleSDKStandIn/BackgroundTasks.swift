// BGTaskScheduler (iOS 13+): the app's periodic background upload.
@_exported import Foundation
// On Apple platforms Foundation includes URLSession; on Linux it is a module of its own.
@_exported import FoundationNetworking

@available(iOS 13.0, tvOS 13.0, *)
open class BGTask: NSObject {
    open var identifier: String { fatalError() }
    open var expirationHandler: (@Sendable () -> Void)? {
        get { fatalError() }
        set {}
    }
    open func setTaskCompleted(success: Bool) {}
}

@available(iOS 13.0, tvOS 13.0, *)
open class BGAppRefreshTask: BGTask {}
@available(iOS 13.0, tvOS 13.0, *)
open class BGProcessingTask: BGTask {}

@available(iOS 13.0, tvOS 13.0, *)
open class BGTaskRequest: NSObject {
    open var identifier: String { fatalError() }
    open var earliestBeginDate: Date? {
        get { fatalError() }
        set {}
    }
}

@available(iOS 13.0, tvOS 13.0, *)
open class BGAppRefreshTaskRequest: BGTaskRequest {
    public init(identifier: String) { fatalError() }
}

@available(iOS 13.0, tvOS 13.0, *)
open class BGTaskScheduler: NSObject {
    open class var shared: BGTaskScheduler { fatalError() }
    open func register(
        forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
        launchHandler: @escaping @Sendable (BGTask) -> Void
    ) -> Bool { fatalError() }
    open func submit(_ taskRequest: BGTaskRequest) throws {}
    open func cancel(taskRequestWithIdentifier identifier: String) {}
}
