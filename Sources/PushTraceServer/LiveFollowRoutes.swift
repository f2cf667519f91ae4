import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import PushTraceCore
import PushTraceRecords
import PushTraceStore
import ServiceLifecycle

/// `GET /v1/notifications/{id}/events` (docs/console.md): Server-Sent Events of one notification's new records
/// (`record`) and answer changes (`cause`), until the answer is final (`end`), the stream has been idle too long,
/// the client leaves or the server stops.
///
/// The stream polls the store with ``WhyFollow`` rather than listening to this server's own uploads: an upload that
/// reached another server sharing the PostgreSQL store shows the same way. Streams are bounded overall and per
/// token, so that followers cannot turn into a load on the store.
struct LiveFollowRoutes: Sendable {
    let store: any TraceReader
    let authenticator: Authenticator
    /// Asked to write the summaries of acknowledged bundles before the app of an ID is looked up in them.
    let writer: IngestWriter
    let limits: LiveFollowLimits
    let streams: StreamCounter

    init(store: any TraceReader, authenticator: Authenticator, writer: IngestWriter, limits: LiveFollowLimits) {
        self.store = store
        self.authenticator = authenticator
        self.writer = writer
        self.limits = limits
        self.streams = StreamCounter(total: limits.streams, perCaller: limits.streamsPerToken)
    }

    func register(on router: Router<ServerRequestContext>) {
        router.get("/v1/notifications/:id/events") { request, context in try await events(request, context: context) }
    }

    func events(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let caller = try await authenticator.caller(ofConsoleOrBearer: request, allowing: [.read, .admin], toDo: "read notifications")
        let (id, app) = try await ReadRoutes.notification(
            request, context: context, caller: caller, store: store, writer: writer)
        // An ID nothing is stored for is answered at once, as `why` answers it: a stream cannot tell a notification
        // about to arrive from a mistyped ID, and would hold a place until its idle limit.
        let known = try await APIError.reading(self.store) {
            guard let app else { return false }
            return try await self.store.why(appID: app, notificationID: id).diagnosis.cause != .unknownNotification
        }
        guard known else {
            throw APIError(.notFound, "unknown_notification", "nothing is stored for \(id)\(app.map { " of \($0)" } ?? "")")
        }
        let key: String =
            switch caller {
            case .anyone: "anyone"
            case .token(let token): token.id
            }
        guard let slot = streams.take(for: key) else {
            throw APIError(
                .tooManyRequests, "too_many_streams",
                "too many live streams are open (\(limits.streamsPerToken) per token, \(limits.streams) in all); close one",
                retryAfter: 10)
        }
        let store = self.store
        let limits = self.limits
        let logger = context.logger
        let appID = app ?? ""
        let body = ResponseBody { writer in
            // The slot is let go when the stream ends, or when its response is dropped unsent.
            defer { withExtendedLifetime(slot) {} }
            try await Self.stream(
                to: &writer, store: store, appID: appID, notificationID: id, limits: limits, logger: logger)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                // nginx would otherwise hold the events back in its buffer.
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: body)
    }

    /// Reads the answer every ``LiveFollowLimits/poll`` and writes what changed.
    static func stream(
        to writer: inout any ResponseBodyWriter, store: any TraceReader, appID: String, notificationID: String,
        limits: LiveFollowLimits, logger: Logger
    ) async throws {
        var follow = WhyFollow()
        let clock = ContinuousClock()
        var lastChange = clock.now
        var lastWrite = clock.now
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        var reason = "idle"
        while true {
            let report: WhyReport
            do {
                report = try await store.why(appID: appID, notificationID: notificationID)
            } catch {
                logger.warning("live follow: the store did not answer", metadata: ["error": "\(error)"])
                reason = "store_unavailable"
                break
            }
            let events = follow.events(for: report)
            if !events.isEmpty {
                var text = ""
                for event in events { text += "event: \(event.name)\ndata: \(event.data)\n\n" }
                try await writer.write(ByteBuffer(string: text))
                lastChange = clock.now
                lastWrite = clock.now
            }
            if !report.mayStillChange {
                reason = "final"
                break
            }
            if clock.now - lastChange > limits.idle { break }
            if Task.isShuttingDownGracefully || Task.isCancelled {
                reason = "server_stopping"
                break
            }
            if clock.now - lastWrite > limits.heartbeat {
                try await writer.write(ByteBuffer(string: ": still following\n\n"))
                lastWrite = clock.now
            }
            try await Task.sleep(for: limits.poll)
        }
        try await writer.write(ByteBuffer(string: "event: end\ndata: {\"reason\":\"\(reason)\"}\n\n"))
        try await writer.finish(nil)
    }
}

/// How live streams are bounded (``ServerSettings/liveFollow``).
public struct LiveFollowLimits: Sendable {
    /// Streams open at once on this server.
    public var streams = 64
    /// Streams one token (or, under `--no-auth`, everyone) may hold open.
    public var streamsPerToken = 8
    /// A stream ends after this long without a new record or answer.
    public var idle: Duration = .seconds(600)
    /// How often the store is read for each stream.
    public var poll: Duration = .milliseconds(500)
    /// A comment line is sent after this long without an event, so that proxies keep the connection.
    public var heartbeat: Duration = .seconds(15)

    public init() {}
}

/// Counts open streams, overall and per caller; a taken ``Slot`` gives its place back when it goes away.
final class StreamCounter: Sendable {
    let total: Int
    let perCaller: Int
    private let counts = NIOLockedValueBox((total: 0, byCaller: [String: Int]()))

    init(total: Int, perCaller: Int) {
        self.total = total
        self.perCaller = perCaller
    }

    /// A place for one more stream of `caller`, or nil when either bound is reached.
    func take(for caller: String) -> Slot? {
        let taken = counts.withLockedValue { counts in
            guard counts.total < total, counts.byCaller[caller, default: 0] < perCaller else { return false }
            counts.total += 1
            counts.byCaller[caller, default: 0] += 1
            return true
        }
        return taken ? Slot(counter: self, caller: caller) : nil
    }

    /// Streams open now.
    var open: Int { counts.withLockedValue { $0.total } }

    fileprivate func release(_ caller: String) {
        counts.withLockedValue { counts in
            counts.total -= 1
            let left = counts.byCaller[caller, default: 1] - 1
            counts.byCaller[caller] = left > 0 ? left : nil
        }
    }

    final class Slot: Sendable {
        let counter: StreamCounter
        let caller: String

        init(counter: StreamCounter, caller: String) {
            self.counter = counter
            self.caller = caller
        }

        deinit { counter.release(caller) }
    }
}
