import HTTPTypes
import Hummingbird

/// Gives every error the JSON body of SPEC §8 (a wrong path included, which the router answers with a bare 404) and
/// counts responses by route and status.
struct ResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            metrics.response(route: context.endpointPath ?? "unmatched", status: response.status.code)
            return response
        } catch let error as APIError {
            metrics.response(route: context.endpointPath ?? "unmatched", status: error.status.code)
            if error.status.code >= 500 {
                context.logger.error("refused", metadata: ["status": "\(error.status.code)", "error": "\(error.message)"])
            } else {
                context.logger.info("refused", metadata: ["status": "\(error.status.code)", "error": "\(error.message)"])
            }
            throw error
        } catch let error as any HTTPResponseError {
            metrics.response(route: context.endpointPath ?? "unmatched", status: error.status.code)
            let code = error.status == .notFound ? "not_found" : "http_\(error.status.code)"
            let message = error.status == .notFound ? "no such endpoint: \(request.method) \(request.uri.path)"
                : error.status.reasonPhrase
            throw APIError(error.status, code, message)
        } catch {
            metrics.response(route: context.endpointPath ?? "unmatched", status: 500)
            context.logger.error("internal error", metadata: ["error": "\(error)"])
            throw APIError(.internalServerError, "internal", "the server failed: \(error)")
        }
    }
}
