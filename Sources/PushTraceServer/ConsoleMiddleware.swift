import HTTPTypes
import Hummingbird
import Logging
import PushTraceConsole

/// Every response under `/ui/` (docs/console.md): the security headers, and a refusal or a failure answered as a
/// page in plain words rather than JSON; a page that needs a session redirects to the sign-in instead.
struct ConsoleMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let pages: ConsolePages

    /// No inline script or style, nothing from another origin, no framing.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == "/ui" || path.hasPrefix("/ui/") else { return try await next(request, context) }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            response = answer(error, request: request, context: context)
        } catch let error as any HTTPResponseError {
            // Hummingbird's own refusals (a sign-in form over its size limit): their status, as a page.
            response = answer(
                APIError(error.status, "http_\(error.status.code)", error.status.reasonPhrase), request: request, context: context)
        } catch {
            context.logger.error("console page failed", metadata: ["error": "\(error)"])
            var failure = APIError(
                .internalServerError, "internal", "The server failed to draw this page. Its log has the details under this request ID.")
            failure.requestID = context.id
            response = answer(failure, request: request, context: context)
        }
        Self.secure(&response.headers)
        return response
    }

    /// The headers of every console response.
    static func secure(_ headers: inout HTTPFields) {
        headers[HTTPField.Name("Content-Security-Policy")!] = contentSecurityPolicy
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
    }

    private func answer(_ error: APIError, request: Request, context: Context) -> Response {
        if error.status == .unauthorized, request.method == .get || request.method == .head {
            return Response(status: .seeOther, headers: [.location: "/ui/login"])
        }
        let heading: String =
            switch error.status.code {
            case 400: "That request cannot be answered"
            case 401: "Sign in first"
            case 403: "Not yours to read"
            case 404: "Not found"
            case 409: "Which app?"
            case 429: "Too many tries"
            case 503: "The store cannot answer now"
            default: "Something went wrong"
            }
        let page = ErrorPage(heading: heading, message: error.message, requestID: error.status.code >= 500 ? context.id : nil)
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if !error.allow.isEmpty { headers[.allow] = error.allow.joined(separator: ", ") }
        headers[ResponseMiddleware<Context>.requestIDHeader] = context.id
        let frame = PageFrame(title: heading, viewer: nil)
        return Response(
            status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: pages.error(page, frame: frame))))
    }
}
