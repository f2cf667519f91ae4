import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// Gives every answer a request ID (`X-Request-ID`, the `hb.request.id` of the server's log lines for it) and
/// every error the JSON body of docs/spec.md §8 (Hummingbird's own errors included), and counts responses by route and
/// status.
///
/// A failure the server did not foresee is answered 500 in plain words and the request ID; what failed (an SQL
/// error, a path) goes to the log under that ID, never to the client.
struct ResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    /// The response header that carries the request ID.
    static var requestIDHeader: HTTPField.Name { HTTPField.Name("X-Request-ID")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            var response = try await next(request, context)
            metrics.response(route: context.endpointPath ?? "unmatched", status: response.status.code)
            response.headers[Self.requestIDHeader] = context.id
            return response
        } catch var error as APIError {
            metrics.response(route: context.endpointPath ?? "unmatched", status: error.status.code)
            if error.status.code >= 500 {
                var metadata: Logger.Metadata = ["status": "\(error.status.code)", "error": "\(error.message)"]
                if let detail = error.logDetail { metadata["detail"] = "\(detail)" }
                context.logger.error("refused", metadata: metadata)
            } else {
                context.logger.info("refused", metadata: ["status": "\(error.status.code)", "error": "\(error.message)"])
            }
            error.requestID = context.id
            // Refused with a body still coming that is large, or of unknown length: close rather than let the
            // connection read it all (a 401 or 404 to a stranger's 10 GB POST). The upload routes decide for
            // themselves: they know how much of the body they read.
            if !Self.uploadRoutes.contains(context.endpointPath ?? ""), Self.bodyLeftUnbounded(request) {
                error.closesConnection = true
            }
            throw error
        } catch is CancellationError {
            // The connection went away mid-request (its client gone, or closed for idling): nobody to answer.
            throw endedEarly(CancellationError(), context: context)
        } catch let error as IOError {
            throw endedEarly(error, context: context)  // reset mid-request
        } catch let error as ChannelError {
            throw endedEarly(error, context: context)
        } catch let error as HTTPParserError {
            // The body was malformed (a bad chunk) or ended early: the client went away, or was disconnected for
            // stalling.
            throw endedEarly(error, context: context)
        } catch let error as any HTTPResponseError {
            metrics.response(route: context.endpointPath ?? "unmatched", status: error.status.code)
            var answer = APIError(error.status, "http_\(error.status.code)", error.status.reasonPhrase)
            answer.requestID = context.id
            answer.closesConnection = Self.bodyLeftUnbounded(request)
            throw answer
        } catch {
            metrics.response(route: context.endpointPath ?? "unmatched", status: 500)
            context.logger.error("internal error", metadata: ["error": "\(error)"])
            var answer = APIError(
                .internalServerError, "internal",
                "the server failed to answer; its log has the details under this request_id")
            answer.requestID = context.id
            throw answer
        }
    }

    /// A request its client ended early or malformed: the client's fault, not the server's, counted and logged as
    /// its 400; nothing of it was stored, and seldom is anyone left to read the answer.
    private func endedEarly(_ error: any Error, context: Context) -> APIError {
        metrics.response(route: context.endpointPath ?? "unmatched", status: 400)
        context.logger.info("request ended early", metadata: ["error": "\(error)"])
        var answer = APIError.badRequest("the request was malformed or ended before its body did")
        answer.requestID = context.id
        return answer
    }

    /// The routes that read a body as it comes, and decide whether to close after refusing it.
    static var uploadRoutes: Set<String> { ["/v1/bundles", "/v1/events"] }

    /// Whether a refused request may still be sending a body worth not reading: chunked, or declared over 1 MiB.
    static func bodyLeftUnbounded(_ request: Request) -> Bool {
        if request.headers[.transferEncoding] != nil { return true }
        return (request.headers[.contentLength].flatMap(Int.init) ?? 0) > IngestRoutes.drainedRemainder
    }
}
