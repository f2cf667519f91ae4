import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PushTraceConsole
import PushTraceStore

/// Builds the pushtrace HTTP server (docs/spec.md §8) over a store: routes, the one writer, metrics.
///
/// ```swift
/// let app = ServerApplication.make(store: store, settings: settings, logger: logger)
/// try await app.runService()   // until SIGTERM or SIGINT
/// ```
public enum ServerApplication {
    /// The application; run it as a service (it stops accepting on SIGTERM/SIGINT, finishes the bundles in
    /// flight and closes the database).
    public static func make(
        store: any TraceStore, settings: ServerSettings, metrics: ServerMetrics = ServerMetrics(),
        logger: Logger
    ) -> some ApplicationProtocol {
        let writer = IngestWriter(store: store, settings: settings, metrics: metrics, logger: logger)
        if let url = settings.publicURL { metrics.consoleInfo(url: url.base) }
        let blocking = BlockingWork(threads: settings.storeThreads)
        let router = makeRouter(store: store, blocking: blocking, settings: settings, metrics: metrics, writer: writer)
        let maxBodyBytes = settings.maxBodyBytes
        return Application(
            responder: HeadResponder(wrapped: router.buildResponder()),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [ExpectContinueHandler(maxBodyBytes: maxBodyBytes)],
                    // A client that stops sending mid-request is disconnected rather than holding a connection forever.
                    idleTimeout: .nanoseconds(
                        Int64(settings.idleTimeout.components.seconds) * 1_000_000_000
                            + settings.idleTimeout.components.attoseconds / 1_000_000_000))),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "pushtrace"),
            services: [
                blocking.service,
                writer,
                AlertMonitor(
                    store: store, blocking: blocking, rules: settings.alertRules, interval: settings.alertInterval,
                    metrics: metrics, logger: logger),
            ]
                + (settings.retentionDays.map { [RetentionService(store: store, days: $0, logger: logger)] } ?? []),
            logger: logger)
    }

    /// Every route of docs/spec.md §8, and the middleware around them. `openapi.json` documents each route, and a test
    /// holds the two to each other.
    static func makeRouter(
        store: any TraceStore, blocking: BlockingWork, settings: ServerSettings, metrics: ServerMetrics,
        writer: IngestWriter
    ) -> Router<ServerRequestContext> {
        let authenticator = Authenticator(
            store: store, requiresTokens: settings.requiresTokens,
            cacheSeconds: settings.tokenCacheSeconds, metrics: metrics)
        let pages = ConsolePages()
        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: ClientAddressMiddleware(trusted: settings.trustedProxies))
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: ResponseMiddleware(metrics: metrics))
        router.add(middleware: ConsoleMiddleware(pages: pages))
        IngestRoutes(settings: settings, authenticator: authenticator, writer: writer, metrics: metrics).register(on: router)
        ReadRoutes(store: store, authenticator: authenticator, writer: writer).register(on: router)
        ReportRoutes(store: store, authenticator: authenticator, rules: settings.alertRules, publicURL: settings.publicURL)
            .register(on: router)
        LiveFollowRoutes(store: store, authenticator: authenticator, writer: writer, limits: settings.liveFollow)
            .register(on: router)
        ConsoleRoutes(
            store: store, authenticator: authenticator, writer: writer, rules: settings.alertRules, pages: pages,
            throttle: LoginThrottle(
                freeFailures: settings.freeLoginFailures,
                firstWait: Double(settings.firstLoginWait.components.seconds)
                    + Double(settings.firstLoginWait.components.attoseconds) / 1e18)
        ).register(on: router)
        router.get("/healthz") { _, _ in
            IngestRoutes.json(.object(["status": "ok"]))
        }
        router.get("/metrics") { request, _ in
            // Without a token, the server's own series only; the series by app (every tenant's apps, categories,
            // volumes and firing alerts) need a metrics or admin token (docs/security.md).
            let apps = try await authenticator.mayReadAppMetrics(request)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition(apps: apps))))
        }
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
        }
        router.add(middleware: UnmatchedRouteMiddleware(routes: router.routes.map { ($0.path, $0.method) }))
        return router
    }
}
