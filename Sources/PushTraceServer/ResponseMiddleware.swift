import HTTPTypes
import Hummingbird
import NIOHTTP1

/// Gives every error the JSON body of SPEC §8 (Hummingbird's own errors included) and counts responses by route and
/// status.
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
        } catch let error as HTTPParserError {
            // The body was malformed (a bad chunk) or ended early: the client went away, or was disconnected for
            // stalling. Its fault, not the server's; nothing of it was stored, and seldom is anyone left to answer.
            metrics.response(route: context.endpointPath ?? "unmatched", status: 400)
            context.logger.info("request ended early", metadata: ["error": "\(error)"])
            throw APIError.badRequest("the request was malformed or ended before its body did: \(error)")
        } catch let error as any HTTPResponseError {
            metrics.response(route: context.endpointPath ?? "unmatched", status: error.status.code)
            throw APIError(error.status, "http_\(error.status.code)", error.status.reasonPhrase)
        } catch {
            metrics.response(route: context.endpointPath ?? "unmatched", status: 500)
            context.logger.error("internal error", metadata: ["error": "\(error)"])
            throw APIError(.internalServerError, "internal", "the server failed: \(error)")
        }
    }
}
