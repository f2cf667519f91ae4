// SwiftUI, as far as docs/agent.md's SwiftUI app sample uses it: an App whose application delegate comes from
// @UIApplicationDelegateAdaptor.
import Foundation
import UIKit

@available(iOS 13.0, macOS 10.15, *)
@MainActor @preconcurrency public protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

@available(iOS 13.0, macOS 10.15, *)
extension Never: View, Scene {
    public var body: Never { return fatalError() }
}

@available(iOS 13.0, macOS 10.15, *)
@resultBuilder public enum ViewBuilder {
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
}

@available(iOS 13.0, macOS 10.15, *)
public struct Text: View {
    public init(_ content: String) {}
    public var body: Never { fatalError() }
}

@available(iOS 14.0, macOS 11.0, *)
@MainActor @preconcurrency public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
}

@available(iOS 14.0, macOS 11.0, *)
@resultBuilder public enum SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

@available(iOS 14.0, macOS 11.0, *)
public struct WindowGroup<Content: View>: Scene {
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError() }
}

@available(iOS 14.0, macOS 11.0, *)
@MainActor @preconcurrency public protocol App {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
    init()
}

@available(iOS 14.0, macOS 11.0, *)
extension App {
    /// What `@main` on an App calls.
    public static func main() {}
}

@available(iOS 14.0, *)
@available(iOSApplicationExtension, unavailable)
@MainActor @preconcurrency @propertyWrapper public struct UIApplicationDelegateAdaptor<DelegateType: NSObject & UIApplicationDelegate> {
    public init(_ delegateType: DelegateType.Type = DelegateType.self) {}
    public var wrappedValue: DelegateType { fatalError() }
}
