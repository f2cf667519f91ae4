import Foundation
import HTTPTypes
import Hummingbird
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// `POST /v1/bundles` and `POST /v1/events`: the body is decoded as it arrives through the same decoder the CLI
/// uses, then handed to the one writer; the answer comes only after the commit.
struct IngestRoutes: Sendable {
    let settings: ServerSettings
    let authenticator: Authenticator
    let writer: IngestWriter
    let metrics: ServerMetrics
    let budget: IngestBudget

    init(settings: ServerSettings, authenticator: Authenticator, writer: IngestWriter, metrics: ServerMetrics) {
        self.settings = settings
        self.authenticator = authenticator
        self.writer = writer
        self.metrics = metrics
        budget = IngestBudget(
            .init(
                bytes: settings.uploadBudgetBytes, tokenShare: settings.tokenBudgetShare,
                uploadsPerToken: settings.uploadsPerToken, wait: settings.budgetWait))
    }

    /// What an endpoint accepts.
    enum Kind: Sendable {
        /// A device bundle (or any bundle).
        case bundle
        /// The push-sending backend's records: the manifest must be a server one.
        case events
    }

    func register(on router: Router<ServerRequestContext>) {
        router.post("/v1/bundles") { request, context in try await ingest(request, context: context, kind: .bundle) }
        router.post("/v1/events") { request, context in try await ingest(request, context: context, kind: .events) }
    }

    func ingest(_ request: Request, context: ServerRequestContext, kind: Kind) async throws -> Response {
        let started = ContinuousClock.now
        let caller: Authenticator.Caller
        do {
            caller = try await authenticator.caller(of: request, allowing: [.ingest, .admin], toDo: "upload")
        } catch var refusal as APIError {
            // Nothing of the body is read for a caller without a token (see `closesUnread`).
            refusal.closesConnection = Self.closesUnread(request)
            throw refusal
        }
        let receivedAt: Int64, encoding: ContentEncoding
        do {
            receivedAt = try Self.receivedAt(of: request, caller: caller)
            encoding = try Self.encoding(of: request)
        } catch var refusal as APIError {
            refusal.closesConnection = Self.closesUnread(request)
            throw refusal
        }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > settings.maxBodyBytes {
            var error = APIError.tooLarge("the body is \(declared) bytes; the limit is \(settings.maxBodyBytes)")
            error.closesConnection = true
            throw error
        }
        let ticket: IngestBudget.Ticket
        do { ticket = try budget.begin(caller: caller.budgetKey) } catch {
            metrics.bundle("rejected")
            throw refusal(error, closing: Self.closesUnread(request))
        }
        defer { budget.end(ticket) }
        let progress = UploadProgress()
        let upload: DecodedUpload
        do {
            // The body is read beside a watchdog that cuts off an upload sending too slowly, whether it trickles
            // (each byte would reset the idle timeout) or stalls before its last bytes.
            upload = try await withThrowingTaskGroup(of: DecodedUpload?.self) { group in
                group.addTask {
                    try await watchRate(of: progress)
                    return nil
                }  // nil: cancelled, or the body done
                group.addTask {
                    try await decodeBody(
                        of: request, caller: caller, kind: kind, encoding: encoding,
                        ticket: ticket, progress: progress)
                }
                while let result = try await group.next() {
                    if let result {
                        group.cancelAll()
                        return result
                    }
                }
                throw CancellationError()  // The request was cancelled: its connection is gone.
            }
        } catch {
            guard
                var refusal = (error as? BundleError).map(APIError.init(bundleError:)) ?? (error as? APIError)
                    ?? (error as? IngestBudget.Refusal).map({ self.refusal($0, closing: false) })
            else {
                throw error
            }
            // Hummingbird reads and discards what is left of a refused body to keep the connection; when much is
            // left (or its size is unknown), the connection closes after the answer instead.
            let declared = request.headers[.contentLength].flatMap(Int.init)
            if !refusal.closesConnection {
                refusal.closesConnection = declared.map { $0 - progress.received > Self.drainedRemainder } ?? true
            }
            metrics.bundle("rejected")
            throw refusal
        }
        let items = upload.items, tally = upload.tally
        metrics.bytes(raw: upload.receivedBytes, decompressed: upload.decompressedBytes)

        let result = try await writer.submit(
            IngestWriter.Bundle(
                source: "http \(context.id)", receivedAt: receivedAt, items: items, rejectedUnkept: upload.rejectedUnkept,
                owner: caller.budgetKey),
            logger: context.logger)
        // Counted here, once committed, rather than on the writer, off the serial path.
        if !result.duplicate { metrics.product(appID: result.appID, tally: tally) }
        metrics.ingestLatency(ContinuousClock.now - started)
        context.logger.info(
            "bundle stored",
            metadata: [
                "app": "\(result.appID)", "bundle": "\(result.bundleID)", "accepted": "\(result.accepted)",
                "rejected": "\(result.rejected)", "duplicate": "\(result.duplicate)",
            ])
        return Self.json(text: result.jsonText)
    }

    /// A body decoded: its items, what the product metrics count of them, and its sizes.
    private struct DecodedUpload: Sendable {
        var items: [BundleItem]
        /// Rejected lines past those a bundle stores (``RejectedLineBatch``): counted, not held.
        var rejectedUnkept: Int
        var tally: ProductTally
        var receivedBytes: Int
        var decompressedBytes: Int
    }

    /// Reads and decodes the body as it arrives, charging what it keeps to the budget (and waiting for room when
    /// its headroom runs short), and refusing another app's bundle as soon as the manifest says whose it is.
    private func decodeBody(
        of request: Request, caller: Authenticator.Caller, kind: Kind, encoding: ContentEncoding,
        ticket: IngestBudget.Ticket, progress: UploadProgress
    ) async throws -> DecodedUpload {
        let decoder = BundleDecoder(encoding: encoding, limits: settings.limits)
        var items: [BundleItem] = []
        // What the product metrics count, noted as each item is decoded.
        var tally = ProductTally()
        var authorized = false
        // Past the rejected lines a bundle stores, a rejected line is only counted: a body of a million bad lines
        // holds no more memory than one of a thousand.
        var rejectedKept = 0, rejectedUnkept = 0
        let keep = { (item: BundleItem) throws in
            if case .rejected = item {
                guard rejectedKept < RejectedLineBatch.lineLimit else {
                    rejectedUnkept += 1
                    return
                }
                rejectedKept += 1
            }
            try budget.charge(ticket, item.heldBytes)
            tally.observe(item)
            items.append(item)
        }
        for try await chunk in request.body {
            guard decoder.receivedBytes + chunk.readableBytes <= settings.maxBodyBytes else {
                throw APIError.tooLarge("the body is over the limit of \(settings.maxBodyBytes) bytes")
            }
            progress.received(chunk.readableBytes)
            if ticket.headroom < IngestBudget.step / 2 {
                progress.waiting(true)
                defer { progress.waiting(false) }
                try await budget.reserve(ticket, IngestBudget.step)
            }
            try chunk.withUnsafeReadableBytes { bytes in try decoder.consume(bytes, keep) }
            if !authorized, let manifest = decoder.manifest {
                try authorize(manifest, caller: caller, kind: kind)
                authorized = true
            }
        }
        try decoder.finish(keep)
        if !authorized, let manifest = decoder.manifest { try authorize(manifest, caller: caller, kind: kind) }
        return DecodedUpload(
            items: items, rejectedUnkept: rejectedUnkept, tally: tally, receivedBytes: decoder.receivedBytes,
            decompressedBytes: decoder.decompressedBytes)
    }

    /// Throws 408 (and the connection closes) once an upload has sent less than
    /// ``ServerSettings/minUploadBytesPerSecond`` over the last ``ServerSettings/slowUploadGrace``, its first such
    /// span excepted. Seconds spent waiting for the budget are the server's and are not counted.
    private func watchRate(of progress: UploadProgress) async throws {
        let window = max(1, Int(settings.slowUploadGrace.components.seconds))
        let longest = max(1, Int(settings.maxUploadDuration.components.seconds))
        var history: [Int] = []
        var active = 0
        while true {
            // Cancelled once the body is read (or the request is gone): then it ends quietly, and the body's own
            // outcome is the request's.
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
            // A second spent waiting for the budget is the server's: the window pauses over it.
            let (received, waiting) = progress.state
            if waiting { continue }
            active += 1
            if active > longest {
                var error = APIError(.requestTimeout, "too_slow", "the body took over \(longest) s; split it into smaller bundles")
                error.closesConnection = true
                throw error
            }
            history.append(received)
            guard history.count > window else { continue }
            let recent = received - history[history.count - 1 - window]
            history.removeFirst(history.count - 1 - window)
            guard recent < settings.minUploadBytesPerSecond.multipliedReportingOverflow(by: window).partialValue else {
                continue
            }
            var error = APIError(
                .requestTimeout, "too_slow",
                "the body sent \(recent) bytes in the last \(window) s; uploads must send at least "
                    + "\(settings.minUploadBytesPerSecond) bytes a second")
            error.closesConnection = true
            throw error
        }
    }

    /// The answer to a request the budget has no room for: 429 with `Retry-After`, or 413 for one that would never
    /// fit.
    private func refusal(_ refusal: IngestBudget.Refusal, closing: Bool) -> APIError {
        let message: String
        switch refusal {
        case .neverFits(let limit):
            var error = APIError.tooLarge(
                "the bundle decodes to more than the \(limit >> 20) MiB of upload memory one "
                    + "upload may hold; split it into smaller bundles")
            error.closesConnection = closing
            return error
        case .tooManyUploads(let limit):
            message =
                "this token already has \(limit) uploads in progress, its limit; retry after "
                + "\(settings.retryAfterOverloaded) s"
        case .noRoom(let share):
            message =
                (share
                    ? "this token's uploads hold their share of the server's upload memory"
                    : "the server's upload memory is in use") + "; retry after \(settings.retryAfterOverloaded) s"
        }
        var error = APIError(.tooManyRequests, "overloaded", message, retryAfter: settings.retryAfterOverloaded)
        error.closesConnection = closing
        return error
    }

    private func authorize(_ manifest: Manifest, caller: Authenticator.Caller, kind: Kind) throws {
        if kind == .events, !manifest.isFromServer {
            throw APIError.badRequest(
                "line 1: /v1/events takes the backend's records (a manifest without device_id, "
                    + "or device_id \"server\"); upload device bundles to /v1/bundles")
        }
        guard caller.covers(appID: manifest.appID ?? "") else {
            throw APIError.forbidden(
                "this token is for app \(caller.confinedApp ?? "?"), "
                    + "not \(manifest.appID ?? "") (the manifest's app_id)")
        }
    }

    /// The most of a refused body worth reading to keep the connection open.
    static let drainedRemainder = 1 << 20

    /// Whether the connection closes after refusing `request` before reading any of its body: a small body is
    /// drained to keep the connection; a large one, or one of unknown length, is not, so that the server does not
    /// read on what a stranger keeps sending.
    static func closesUnread(_ request: Request) -> Bool {
        request.headers[.contentLength].flatMap(Int.init).map { $0 > drainedRemainder } ?? true
    }

    /// The header with which an admin replays archived uploads: when they were originally received (epoch ms).
    static let receivedAtHeader = HTTPField.Name("Pushtrace-Received-At")!

    /// When the bundle was received: the reference for device clock correction (docs/protocol.md#clocks). Now, unless an admin
    /// (or anyone under `--no-auth`) replays an archived upload with `Pushtrace-Received-At`.
    static func receivedAt(of request: Request, caller: Authenticator.Caller) throws -> Int64 {
        guard let replayed = request.headers[receivedAtHeader] else { return Int64(Date().timeIntervalSince1970 * 1000) }
        if case .token(let token) = caller, token.scope != .admin {
            throw APIError.forbidden("only an admin token may set \(receivedAtHeader) (replaying archived uploads)")
        }
        guard let ms = InstantText.parse(replayed) else {
            throw APIError.badRequest("\(receivedAtHeader): \(replayed) is not a time: \(InstantText.rangeHint)")
        }
        return ms
    }

    /// The decoder's encoding for the request's `Content-Encoding` (415 for one it does not read).
    static func encoding(of request: Request) throws -> ContentEncoding {
        guard let header = request.headers[.contentEncoding].map(token), !header.isEmpty else {
            return .sniff
        }
        switch header {
        case "gzip", "x-gzip": return .gzip
        case "deflate": return .deflate
        case "identity": return .identity
        default:
            throw APIError.unsupportedEncoding("Content-Encoding \(header) is not supported; use gzip, deflate or identity")
        }
    }

    /// A header's value without the spaces and tabs around it, ASCII letters lowercased, byte by byte: Foundation's
    /// Unicode-aware trimming and case folding cost more than the rest of reading a header, on every upload.
    private static func token(_ value: String) -> String {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let bytes = value.utf8
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(decoding: bytes[first...last].lazy.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        json(text: value.jsonText(pretty: false), status: status)
    }

    static func json(text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}

/// How much of an upload's body has come, and whether it is waiting for the budget: what the request tells its
/// rate watchdog.
final class UploadProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = 0
    private var isWaiting = false

    var received: Int { lock.withLock { bytes } }
    var state: (received: Int, waiting: Bool) { lock.withLock { (bytes, isWaiting) } }

    func received(_ count: Int) { lock.withLock { bytes += count } }
    func waiting(_ value: Bool) { lock.withLock { isWaiting = value } }
}

extension IngestResult {
    /// The acknowledgement as compact JSON with sorted keys, the text `jsonValue.jsonText(pretty: false)` gives.
    /// Written directly when no string needs escaping (JSONEncoder was a twentieth of an upload's handling).
    var jsonText: String {
        let plain = { (text: String) in text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") } }
        guard plain(appID), plain(bundleID), rejections.allSatisfy({ plain($0.reason) }) else {
            return jsonValue.jsonText(pretty: false)
        }
        let listed = rejections.map { #"{"line":\#($0.line),"reason":"\#($0.reason)"}"# }.joined(separator: ",")
        return #"{"accepted":\#(accepted),"app_id":"\#(appID)","bundle_id":"\#(bundleID)","clock_offset_ms":"#
            + #"\#(clockOffsetMs),"duplicate":\#(duplicate),"rejected":\#(rejected),"rejections":[\#(listed)]}"#
    }

    /// The acknowledgement of docs/spec.md §8.
    var jsonValue: JSONValue {
        .object([
            "app_id": .string(appID),
            "bundle_id": .string(bundleID),
            "accepted": .int(Int64(accepted)),
            "rejected": .int(Int64(rejected)),
            "duplicate": .bool(duplicate),
            "clock_offset_ms": .int(clockOffsetMs),
            "rejections": .array(rejections.map { .object(["line": .int(Int64($0.line)), "reason": .string($0.reason)]) }),
        ])
    }
}
