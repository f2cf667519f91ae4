import Foundation
import HTTPTypes
import Hummingbird
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// `GET /v1/notifications/{id}` (the `why` answer) and `GET /v1/notifications` (search), for read and admin tokens.
struct ReadRoutes: Sendable {
    let store: any TraceReader
    let authenticator: Authenticator
    /// Asked to write the summaries of acknowledged bundles before a read that needs them.
    let writer: IngestWriter

    func register(on router: Router<ServerRequestContext>) {
        router.get("/v1/notifications/:id") { request, context in try await why(request, context: context) }
        router.get("/v1/notifications") { request, context in try await search(request, context: context) }
    }

    /// The `why` JSON of docs/spec.md §7, or its text with `Accept: text/plain`. 404 (with the `unknown_notification`
    /// answer) when nothing is stored; 409 when the ID is stored for several apps and `app` does not say which.
    func why(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await authenticator.caller(of: request, allowing: [.read, .admin], toDo: "read notifications")
        let (id, app) = try await Self.notification(
            request, context: context, caller: caller, store: store, writer: writer)
        let report = try await APIError.reading(store) { try await store.why(appID: app ?? "", notificationID: id) }
        let unknown = report.diagnosis.cause == .unknownNotification
        if Self.wantsText(request) {
            return Response(
                status: unknown ? .notFound : .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: report.text)))
        }
        guard unknown, case .object(var fields) = report.jsonValue else { return IngestRoutes.json(report.jsonValue) }
        // An unknown ID is an error (404) whose body is still the `why` answer.
        fields["error"] = "unknown_notification"
        fields["message"] = .string(report.diagnosis.findings.first?.message ?? "nothing is stored for \(id)")
        return IngestRoutes.json(.object(fields), status: .notFound)
    }

    /// Notification summaries, newest first: `app`, `cause`, `category`, `device`, `since`, `until` (epoch
    /// milliseconds or ISO 8601), `limit`.
    func search(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await authenticator.caller(of: request, allowing: [.read, .admin], toDo: "read notifications")
        let parameters = request.uri.queryParameters
        var query = SearchQuery(appID: try caller.app(asking: request.uri.queryParameters["app"].map(String.init)))
        if let cause = parameters["cause"].map(String.init) {
            guard let known = Cause(rawValue: cause) else {
                throw APIError.badRequest(
                    "cause \(cause) is not a cause; use one of "
                        + Cause.allCases.map(\.rawValue).joined(separator: ", "))
            }
            query.cause = known
        }
        query.category = parameters["category"].map(String.init)
        query.deviceID = parameters["device"].map(String.init)
        query.since = try parameters["since"].map { try Self.instant(String($0), name: "since") }
        query.until = try parameters["until"].map { try Self.instant(String($0), name: "until") }
        if let limit = parameters["limit"] {
            guard let value = Int(limit), (1...10_000).contains(value) else {
                throw APIError.badRequest("limit must be a number from 1 to 10000, not \(limit)")
            }
            query.limit = value
        }
        await writer.summariesWritten()
        let rows = try await APIError.reading(store) { try await store.search(query) }
        // A misspelt app answers nothing, silently: say so to a caller who may see every app.
        if rows.isEmpty, caller.confinedApp == nil, let app = query.appID {
            do {
                try await APIError.reading(store) { try await store.requireKnownApp(app) }
            } catch let error as StoreError where error.code == .unknownApp {
                throw APIError(.notFound, "unknown_app", error.description)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(rows))))
    }

    /// The notification a route's path names, and its app: the one asked for with `app=` (a read token's own,
    /// whether asked or not), or else the one app it is stored for (nil when none; 409 when several).
    static func notification(
        _ request: Request, context: ServerRequestContext, caller: Authenticator.Caller, store: any TraceReader,
        writer: IngestWriter
    ) async throws -> (id: String, app: String?) {
        // The router hands the path segment over as sent: an ID with a space or non-ASCII text arrives encoded.
        let raw = try context.parameters.require("id")
        let id = raw.removingPercentEncoding ?? raw
        // What no bundle can store (a control character, an ID over the limit) is a malformed request, not an unknown
        // notification; it is refused before it reaches the store or the answer.
        if let problem = WireBounds.identifierProblem(id) {
            throw APIError.badRequest("the notification ID \(problem)")
        }
        let asked = try caller.app(asking: request.uri.queryParameters["app"].map(String.init))
        if let asked { return (id, asked) }
        await writer.summariesWritten()
        do {
            return (id, try await APIError.reading(store) { try await store.app(nil, ofNotification: id) })
        } catch let error as StoreError where error.code == .ambiguousNotification {
            throw APIError(.conflict, "ambiguous_notification", error.description + "; say which with ?app=")
        }
    }

    static func wantsText(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept]?.lowercased() else { return false }
        return accept.contains("text/plain") && !accept.contains("application/json")
    }

    static func instant(_ text: String, name: String) throws -> Int64 {
        guard let ms = InstantText.parse(text) else {
            throw APIError.badRequest("\(name)=\(text) is not a time: \(InstantText.rangeHint)")
        }
        return ms
    }
}
