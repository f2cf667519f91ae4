// BGTaskScheduler (iOS 13+): the app's periodic background upload.
@_exported import Foundation
// On Apple platforms Foundation includes URLSession; on Linux it is a module of its own.
@_exported import FoundationNetworking

open class BGTask: NSObject {
    open var identifier: String { fatalError() }
    open var expirationHandler: (@Sendable () -> Void)? {
        get { fatalError() }
        set {}
    }
    open func setTaskCompleted(success: Bool) {}
}

open class BGAppRefreshTask: BGTask {}
open class BGProcessingTask: BGTask {}

open class BGTaskRequest: NSObject {
    open var identifier: String { fatalError() }
    open var earliestBeginDate: Date? {
        get { fatalError() }
        set {}
    }
}

open class BGAppRefreshTaskRequest: BGTaskRequest {
    public init(identifier: String) { fatalError() }
}

open class BGTaskScheduler: NSObject {
    open class var shared: BGTaskScheduler { fatalError() }
    open func register(
        forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
        launchHandler: @escaping @Sendable (BGTask) -> Void
    ) -> Bool { fatalError() }
    open func submit(_ taskRequest: BGTaskRequest) throws {}
    open func cancel(taskRequestWithIdentifier identifier: String) {}
}
