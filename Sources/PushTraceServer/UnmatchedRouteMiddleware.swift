import HTTPTypes
import Hummingbird

/// Answers a request that no route took: 405 with `Allow` when its path is an endpoint's under another method (a
/// `GET /v1/bundles` meant as an upload), 404 naming the method and path otherwise.
///
/// Added to the router after every route: a router's middleware wraps the routes added after it and, whenever
/// added, the answer to an unmatched request (the router's bare 404), which is all this one changes.
struct UnmatchedRouteMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Every route of the router, as `Router.routes` lists them.
    let routes: [(path: RouterPath, method: HTTPRequest.Method)]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw answer(toUnmatched: request)
        }
    }

    private func answer(toUnmatched request: Request) -> APIError {
        let path = request.uri.path
        let components = path.split(separator: "/")
        var allowed = routes.filter { route in
            route.path.count == components.count && zip(route.path, components).allSatisfy { $0 ~= $1 }
        }.map(\.method.rawValue)
        // HeadResponder answers HEAD wherever GET is routed.
        if allowed.contains("GET") { allowed.append("HEAD") }
        guard !allowed.isEmpty else {
            return APIError.notFound("no such endpoint: \(request.method) \(path)")
        }
        var error = APIError(
            .methodNotAllowed, "method_not_allowed",
            "\(request.method) \(path): this endpoint takes \(allowed.joined(separator: ", "))")
        error.allow = allowed
        return error
    }
}
