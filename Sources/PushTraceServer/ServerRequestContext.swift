import Hummingbird
import NIOCore

/// The context of every request: Hummingbird's basic one, and the address of the peer that sent it (the client,
/// or the proxy in front of it: ``ClientAddressMiddleware``).
public struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The client's address (``ClientAddressMiddleware``): the peer's, or behind a trusted proxy the one it names.
    public var clientAddress: String?
    /// Whether the client reached the server over TLS: a trusted proxy in front said so (`X-Forwarded-Proto:
    /// https`). The console's session cookie is then `Secure`.
    public var overTLS = false

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
