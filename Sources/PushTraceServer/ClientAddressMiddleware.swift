import HTTPTypes
import Hummingbird

/// Puts the client's address in every log line of a request (`client`): the peer's, or, behind a trusted proxy,
/// the one its `X-Forwarded-For` names (``TrustedProxies``); and whether the client came over TLS, which only a
/// trusted proxy's `X-Forwarded-Proto` can say.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let trusted: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let forwarded = request.headers[values: HTTPField.Name("X-Forwarded-For")!]
        if let client = trusted.client(peer: context.remoteAddress?.ipAddress, forwardedFor: forwarded) {
            context.logger[metadataKey: "client"] = "\(client)"
            context.clientAddress = client
        }
        if let peer = context.remoteAddress?.ipAddress, trusted.contains(peer),
            request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
        {
            context.overTLS = true
        }
        return try await next(request, context)
    }
}
