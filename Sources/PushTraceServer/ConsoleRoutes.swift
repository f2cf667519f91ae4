import Foundation
import HTTPTypes
import Hummingbird
import PushTraceConsole
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// The console under `/ui/` (docs/console.md): sign-in into a session cookie, then the overview, search, a
/// notification's `why`, the weekly report and the alerts, rendered on the server. It reads what the signed-in
/// token may read, exactly as the JSON API does (``Authenticator/Caller``).
struct ConsoleRoutes: Sendable {
    let store: any TraceReader
    let authenticator: Authenticator
    let writer: IngestWriter
    let rules: [AlertRule]
    let pages: ConsolePages
    let throttle: LoginThrottle
    /// Weekly reports by app and week, for a minute: a week's report reads every device of the app.
    let reports = ConsoleCache<DeliveryReport>(lifetime: .seconds(60))
    /// The alert rules judged for an app (or every app), for 10 seconds; the server's alert monitor judges them
    /// every minute for Prometheus.
    let alertReports = ConsoleCache<AlertReport>(lifetime: .seconds(10))

    /// Notifications per search page.
    static let pageSize = 50
    /// The deepest search page: past it, narrow the search instead.
    static let lastPage = 200

    func register(on router: Router<ServerRequestContext>) {
        router.get("/ui/login") { request, _ in try await loginForm(request) }
        router.post("/ui/login") { request, context in try await login(request, context: context) }
        router.post("/ui/logout") { request, context in
            guard ConsoleSessionCookie.postedFromHere(request) else {
                throw APIError.forbidden("a sign-out must come from this site's own form")
            }
            return Response(
                status: .seeOther,
                headers: [.location: "/ui/login", .setCookie: ConsoleSessionCookie.end(secure: context.overTLS)])
        }
        router.get("/ui/") { request, _ in try await overview(request) }
        router.get("/ui/search") { request, _ in try await search(request) }
        router.get("/ui/go") { request, _ in try await go(request) }
        router.get("/ui/notifications/:id") { request, context in try await notification(request, context: context) }
        router.get("/ui/reports/weekly") { request, _ in try await report(request) }
        router.get("/ui/alerts") { request, _ in try await alerts(request) }
        router.get("/ui/static/:name") { _, context in
            guard let asset = ConsoleAssets.named(try context.parameters.require("name")) else {
                throw APIError.notFound("no such file")
            }
            return Response(
                status: .ok, headers: [.contentType: asset.contentType, .cacheControl: "public, max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
        }
    }

    // MARK: Signing in

    /// Who is signed in: the session's token, or everyone under `--no-auth`. 401 (a redirect to the sign-in, for a
    /// page) without a live session.
    func viewer(_ request: Request) async throws -> Authenticator.Caller {
        guard authenticator.requiresTokens else { return .anyone }
        guard let cookie = ConsoleSessionCookie.value(in: request),
            let token = try await authenticator.sessionToken(cookie)
        else { throw APIError.unauthorized("sign in first") }
        guard token.scope == .read || token.scope == .admin else { throw APIError.unauthorized("sign in with a read token") }
        return .token(token)
    }

    private func loginForm(_ request: Request) async throws -> Response {
        if (try? await viewer(request)) != nil, authenticator.requiresTokens {
            return Response(status: .seeOther, headers: [.location: "/ui/"])
        }
        return html(
            pages.login(
                message: authenticator.requiresTokens ? nil : "This server runs with --no-auth: every page is open, no sign-in needed."))
    }

    private func login(_ request: Request, context: ServerRequestContext) async throws -> Response {
        // A form posted from another site is refused: SameSite keeps the cookie from it, this keeps a forged sign-in.
        guard ConsoleSessionCookie.postedFromHere(request) else {
            throw APIError.forbidden("a sign-in must come from this site's own form")
        }
        let address = LoginThrottle.key(context.clientAddress)
        if let wait = throttle.wait(for: address) {
            return html(
                pages.login(message: "Too many failed sign-ins from your address: try again in \(wait) s."),
                status: .tooManyRequests, headers: [.retryAfter: String(wait)])
        }
        let body = try await request.body.collect(upTo: 4096)
        struct Form: Decodable { var token: String? }
        let form = (try? URLEncodedFormDecoder().decode(Form.self, from: String(buffer: body))) ?? Form(token: nil)
        let text = form.token?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !text.isEmpty else {
            return html(pages.login(message: "Paste a token: the field was empty."), status: .badRequest)
        }
        guard let (token, stored) = try await authenticator.verifiedToken(text) else {
            let wait = throttle.failed(address)
            return html(
                pages.login(
                    message: "That token is not one this server knows, or it was revoked."
                        + (wait.map { " Too many failed sign-ins: try again in \($0) s." } ?? "")),
                status: .unauthorized, headers: wait.map { [.retryAfter: String($0)] } ?? [:])
        }
        guard token.scope == .read || token.scope == .admin else {
            throttle.failed(address)
            return html(
                pages.login(
                    message: "A token with scope \(token.scope?.rawValue ?? "unknown") cannot sign in: the console takes a read token "
                        + "(or an admin token). Ingest tokens ship inside the app and only upload."),
                status: .forbidden)
        }
        throttle.succeeded(address)
        let now = Int64(Date().timeIntervalSince1970)
        let session = SessionText(token: stored, expires: now + ConsoleSessionCookie.lifetime)
        return Response(
            status: .seeOther,
            headers: [
                .location: "/ui/",
                .setCookie: ConsoleSessionCookie.start(session, maxAge: ConsoleSessionCookie.lifetime, secure: context.overTLS),
            ])
    }

    // MARK: Pages

    private func overview(_ request: Request) async throws -> Response {
        let caller = try await viewer(request)
        let app = try caller.app(asking: Self.parameter(request, "app"))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let since = now - 86_400_000
        await writer.summariesWritten()
        let counts = try await APIError.reading(store) { try await store.causeCounts(since: since) }.filter { count in
            (app == nil || count.appID == app) && caller.covers(appID: count.appID)
        }
        let alerts = try await judged(app, now: now)
        let page = OverviewPage(
            app: app, counts: counts, since: since, alerts: alerts, form: SearchForm(showApp: caller.confinedApp == nil))
        return html(pages.overview(page, frame: frame(caller, title: "Overview", app: app, section: .overview)))
    }

    private func search(_ request: Request) async throws -> Response {
        let caller = try await viewer(request)
        let parameters = SearchParameters(request)
        var query = SearchQuery(appID: try caller.app(asking: parameters.app), limit: Self.pageSize + 1)
        if let cause = parameters.cause {
            guard let known = Cause(rawValue: cause) else { throw APIError.badRequest("“\(cause)” is not a cause.") }
            query.cause = known
        }
        query.category = parameters.category
        query.deviceID = parameters.device
        query.since = try parameters.since.map { try Self.instant($0, name: "Since") }
        query.until = try parameters.until.map { try Self.instant($0, name: "Until") }
        let page =
            try parameters.page.map { text in
                guard let page = Int(text), (1...Self.lastPage).contains(page) else {
                    throw APIError.badRequest(
                        "page must be a number from 1 to \(Self.lastPage), not “\(text)”; narrow the search by time instead.")
                }
                return page
            } ?? 1
        query.offset = (page - 1) * Self.pageSize
        await writer.summariesWritten()
        let rows = try await APIError.reading(store) { try await store.search(query) }
        let form = SearchForm(
            cause: parameters.cause, app: parameters.app, category: parameters.category, device: parameters.device,
            since: parameters.since, until: parameters.until, showApp: caller.confinedApp == nil)
        let result = SearchPage(
            form: form, rows: Array(rows.prefix(Self.pageSize)), page: page, hasMore: rows.count > Self.pageSize,
            showAppColumn: caller.confinedApp == nil && query.appID == nil
        ) { page in parameters.link(page: page) }
        return html(pages.search(result, frame: frame(caller, title: "Search", app: query.appID, section: .search)))
    }

    /// The overview's "Why?" form: to the notification's page.
    private func go(_ request: Request) async throws -> Response {
        _ = try await viewer(request)
        guard let id = Self.parameter(request, "id") else { throw APIError.badRequest("Type a notification ID.") }
        let trimmed = id.trimmingCharacters(in: .whitespaces)
        return Response(status: .seeOther, headers: [.location: ConsoleURL.notification(trimmed, app: Self.parameter(request, "app"))])
    }

    private func notification(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await viewer(request)
        let raw = try context.parameters.require("id")
        let id = raw.removingPercentEncoding ?? raw
        if let problem = WireBounds.identifierProblem(id) {
            throw APIError.badRequest("The notification ID \(problem).")
        }
        var app = try caller.app(asking: Self.parameter(request, "app"))
        if app == nil {
            await writer.summariesWritten()
            let apps = try await APIError.reading(store) { try await store.apps(forNotification: id) }
            if apps.count > 1 {
                throw APIError(
                    .conflict, "ambiguous_notification",
                    "\(id) is stored for \(apps.count) apps (\(apps.prefix(10).joined(separator: ", "))): add ?app= to say which.")
            }
            app = apps.first
        }
        guard let app else { throw APIError.notFound("Nothing is stored for the notification \(id).") }
        let report = try await APIError.reading(store) { try await store.why(appID: app, notificationID: id) }
        // Another app's notification, for a read token, is not stored as far as it can tell.
        guard report.diagnosis.cause != .unknownNotification else {
            throw APIError.notFound("Nothing is stored for the notification \(id) of \(app).")
        }
        let page = NotificationPage(report: report)
        return html(pages.notification(page, frame: frame(caller, title: "Why \(id)", app: app, section: .other)))
    }

    private func report(_ request: Request) async throws -> Response {
        let caller = try await viewer(request)
        // A viewer of every app who names none (the navigation's link) gets the first app's report, with the app
        // field to switch: a page, where the JSON API asks which.
        var app = try caller.app(asking: Self.parameter(request, "app"))
        await writer.summariesWritten()
        if app == nil { app = try await APIError.reading(store) { try await store.appIDs() }.first }
        guard let app else { throw APIError.notFound("No notification is stored yet, so there is no report to show.") }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let period: ReportPeriod
        if let week = Self.parameter(request, "week") {
            guard let parsed = ReportPeriod(isoWeek: week) else {
                throw APIError.badRequest("“\(week)” is not an ISO week: write it as YYYY-Www, e.g. 2026-W46.")
            }
            period = parsed
        } else {
            period = ReportPeriod(weekContaining: now).previous
        }
        let report = try await reports.value("\(app)\u{0}\(period.label)") {
            try await APIError.reading(store) { try await store.report(appID: app, period: period) }
        }
        let page = ReportPage(report: report, showApp: caller.confinedApp == nil, now: now)
        return html(pages.report(page, frame: frame(caller, title: "Weekly report \(period.label)", app: app, section: .report)))
    }

    private func alerts(_ request: Request) async throws -> Response {
        let caller = try await viewer(request)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let confined = caller.confinedApp
        let report = try await judged(confined, now: now)
        return html(pages.alerts(AlertsPage(report: report), frame: frame(caller, title: "Alerts", app: confined, section: .alerts)))
    }

    // MARK: Helpers

    /// The alert rules judged for `app` (every app when nil), as of `now` or up to 10 seconds before.
    private func judged(_ app: String?, now: Int64) async throws -> AlertReport {
        try await alertReports.value(app ?? "") {
            try await APIError.reading(store) { try await store.alerts(rules, now: now, appID: app) }
        }
    }

    private func frame(_ caller: Authenticator.Caller, title: String, app: String?, section: PageFrame.Section) -> PageFrame {
        let viewer: String =
            switch caller {
            case .anyone: "no sign-in (--no-auth)"
            case .token(let token):
                token.scope == .admin ? "admin token \(token.id)" : "read token \(token.id) for \(token.appID ?? "?")"
            }
        return PageFrame(title: title, viewer: viewer, app: app, section: section)
    }

    private func html(_ text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A query parameter, nil when absent or empty (a form sends its empty fields).
    static func parameter(_ request: Request, _ name: String) -> String? {
        guard let value = request.uri.queryParameters[Substring(name)], !value.isEmpty else { return nil }
        return String(value)
    }

    static func instant(_ text: String, name: String) throws -> Int64 {
        guard let ms = InstantText.parse(text) else {
            throw APIError.badRequest("\(name) “\(text)” is not a time: \(InstantText.rangeHint).")
        }
        return ms
    }

    /// The search page's parameters as sent, for the form and the links to other pages.
    struct SearchParameters {
        var cause, app, category, device, since, until, page: String?

        init(_ request: Request) {
            cause = ConsoleRoutes.parameter(request, "cause")
            app = ConsoleRoutes.parameter(request, "app")
            category = ConsoleRoutes.parameter(request, "category")
            device = ConsoleRoutes.parameter(request, "device")
            since = ConsoleRoutes.parameter(request, "since")
            until = ConsoleRoutes.parameter(request, "until")
            page = ConsoleRoutes.parameter(request, "page")
        }

        func link(page: Int) -> String {
            ConsoleURL.link(
                "/ui/search",
                [
                    ("cause", cause), ("app", app), ("category", category), ("device", device), ("since", since),
                    ("until", until), ("page", page > 1 ? String(page) : nil),
                ])
        }
    }
}
