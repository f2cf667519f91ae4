import HTTPTypes
import Hummingbird

/// Answers `HEAD` on every `GET` endpoint as its `GET` would, headers and status, without the body (RFC 9110
/// §9.3.2): load balancers and uptime checks probe with it. The router knows `GET` routes only, so the request is
/// routed as a `GET` and its answer, or its error's, sent without the body.
struct HeadResponder<Wrapped: HTTPResponder>: HTTPResponder where Wrapped.Context: RequestContext {
    let wrapped: Wrapped

    func respond(to request: Request, context: Wrapped.Context) async throws -> Response {
        guard request.method == .head else { return try await wrapped.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        let get = Request(head: head, body: request.body)
        do {
            return try await wrapped.respond(to: get, context: context).createHeadResponse()
        } catch let error as any HTTPResponseError {
            return try error.response(from: get, context: context).createHeadResponse()
        }
    }
}
