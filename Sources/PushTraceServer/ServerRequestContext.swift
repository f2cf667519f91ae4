import Hummingbird
import NIOCore

/// The context of every request: Hummingbird's basic one, and the address of the peer that sent it (the client,
/// or the proxy in front of it: ``ClientAddressMiddleware``).
public struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
