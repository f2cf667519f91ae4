import Foundation
import Hummingbird
import PushTraceConsole
import PushTraceCore
import PushTraceStore

/// `GET /v1/reports/weekly` and `GET /v1/alerts`, for read and admin tokens.
struct ReportRoutes: Sendable {
    let store: any TraceReader
    let authenticator: Authenticator
    let rules: [AlertRule]
    let publicURL: PublicURL?

    func register(on router: Router<ServerRequestContext>) {
        router.get("/v1/reports/weekly") { request, _ in try await weekly(request) }
        router.get("/v1/alerts") { request, _ in try await alerts(request) }
    }

    /// The delivery report of `app` (implied by a read token) for `week` (`2026-W46`; default the last complete
    /// week): JSON, or text with `Accept: text/plain`, or Markdown with `Accept: text/markdown`.
    func weekly(_ request: Request) async throws -> Response {
        let caller = try await authenticator.caller(of: request, allowing: [.read, .admin], toDo: "read reports")
        let parameters = request.uri.queryParameters
        let app = try await Self.app(try caller.app(asking: parameters["app"].map(String.init)), of: store)
        let period: ReportPeriod
        if let week = parameters["week"].map(String.init) {
            guard let parsed = ReportPeriod(isoWeek: week) else {
                throw APIError.badRequest("week=\(week) is not an ISO week: use YYYY-Www (2000 to 2199), e.g. 2026-W46")
            }
            period = parsed
        } else {
            period = ReportPeriod(weekContaining: Int64(Date().timeIntervalSince1970 * 1000)).previous
        }
        let report = try await APIError.reading(store) { try await store.report(appID: app, period: period) }
        let accept = request.headers[.accept]?.lowercased() ?? ""
        if accept.contains("text/markdown") {
            return Self.text(ReportText.markdown(report), type: "text/markdown; charset=utf-8")
        }
        if ReadRoutes.wantsText(request) { return Self.text(ReportText.text(report), type: "text/plain; charset=utf-8") }
        return try Self.json(report)
    }

    /// The alert rules evaluated as of `now` (epoch milliseconds or ISO 8601; default the current time). A read
    /// token sees only its app's alerts. Always 200: firing is an answer, not an error.
    func alerts(_ request: Request) async throws -> Response {
        let caller = try await authenticator.caller(of: request, allowing: [.read, .admin], toDo: "read alerts")
        let now =
            try request.uri.queryParameters["now"].map { try ReadRoutes.instant(String($0), name: "now") }
            ?? Int64(Date().timeIntervalSince1970 * 1000)
        // A read token's answer is its app's alone: the firing alerts and the count of windows judged.
        let confined = caller.confinedApp
        var report = try await APIError.reading(store) { try await store.alerts(rules, now: now, appID: confined) }
        if let publicURL { report = publicURL.linking(report) }
        if ReadRoutes.wantsText(request) { return Self.text(report.text, type: "text/plain; charset=utf-8") }
        return try Self.json(report)
    }

    /// The app a report is about: the one asked for or implied by a read token; for a token of every app (admin,
    /// or `--no-auth`) that names none, the store's only app. With several apps stored, which one is a question
    /// only the caller can answer: 400, naming them.
    static func app(_ asked: String?, of store: any TraceReader) async throws -> String {
        if let asked { return asked }
        let apps = try await APIError.reading(store) { try await store.appIDs() }
        if apps.count == 1 { return apps[0] }
        let known = apps.isEmpty ? "none is stored yet" : "this store holds \(apps.count): " + apps.prefix(10).joined(separator: ", ")
        throw APIError.badRequest("app is required (\(known)): /v1/reports/weekly?app=APP_ID&week=2026-W46")
    }

    private static func text(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
