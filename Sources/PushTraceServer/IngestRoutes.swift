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
    let largeBundles: LargeBundleGate

    init(settings: ServerSettings, authenticator: Authenticator, writer: IngestWriter, metrics: ServerMetrics) {
        self.settings = settings
        self.authenticator = authenticator
        self.writer = writer
        self.metrics = metrics
        largeBundles = LargeBundleGate(slots: settings.concurrentLargeBundles)
    }

    /// What an endpoint accepts.
    enum Kind: Sendable {
        /// A device bundle (or any bundle).
        case bundle
        /// The push-sending backend's records: the manifest must be a server one.
        case events
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/bundles") { request, context in try await ingest(request, context: context, kind: .bundle) }
        router.post("/v1/events") { request, context in try await ingest(request, context: context, kind: .events) }
    }

    func ingest(_ request: Request, context: BasicRequestContext, kind: Kind) async throws -> Response {
        let started = ContinuousClock.now
        let caller = try authenticator.caller(of: request, allowing: [.ingest, .admin], toDo: "upload")
        let receivedAt = try Self.receivedAt(of: request, caller: caller)
        let encoding = try Self.encoding(of: request)
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > settings.maxBodyBytes {
            var error = APIError.tooLarge("the body is \(declared) bytes; the limit is \(settings.maxBodyBytes)")
            error.closesConnection = true
            throw error
        }
        let decoder = BundleDecoder(encoding: encoding, limits: settings.limits)
        var items: [BundleItem] = []
        // What the product metrics count, noted as each item is decoded.
        var tally = ProductTally()
        var authorized = false
        var large = false
        defer { if large { largeBundles.leave() } }
        do {
            for try await chunk in request.body {
                guard decoder.receivedBytes + chunk.readableBytes <= settings.maxBodyBytes else {
                    throw APIError.tooLarge("the body is over the limit of \(settings.maxBodyBytes) bytes")
                }
                try chunk.withUnsafeReadableBytes { bytes in
                    try decoder.consume(bytes) { tally.observe($0); items.append($0) }
                }
                // Refuse another app's bundle as soon as its manifest is read, not after the whole body.
                if !authorized, let manifest = decoder.manifest {
                    try authorize(manifest, caller: caller, kind: kind)
                    authorized = true
                }
                if !large, items.count > settings.largeBundleRecords {
                    await largeBundles.enter()
                    large = true
                }
            }
            try decoder.finish { tally.observe($0); items.append($0) }
            if !authorized, let manifest = decoder.manifest { try authorize(manifest, caller: caller, kind: kind) }
        } catch {
            guard var refusal = (error as? BundleError).map(APIError.init(bundleError:)) ?? (error as? APIError) else {
                throw error
            }
            // Hummingbird reads and discards what is left of a refused body to keep the connection; when much is
            // left (or its size is unknown), the connection closes after the answer instead.
            let declared = request.headers[.contentLength].flatMap(Int.init)
            refusal.closesConnection = declared.map { $0 - decoder.receivedBytes > Self.drainedRemainder } ?? true
            metrics.bundle("rejected")
            throw refusal
        }
        metrics.bytes(raw: decoder.receivedBytes, decompressed: decoder.decompressedBytes)

        let result = try await writer.submit(
            IngestWriter.Bundle(source: "http \(context.id)", receivedAt: receivedAt, items: items), logger: context.logger)
        // Counted here, once committed, rather than on the writer, off the serial path.
        if !result.duplicate { metrics.product(appID: result.appID, tally: tally) }
        metrics.ingestLatency(ContinuousClock.now - started)
        context.logger.info("bundle stored", metadata: [
            "app": "\(result.appID)", "bundle": "\(result.bundleID)", "accepted": "\(result.accepted)",
            "rejected": "\(result.rejected)", "duplicate": "\(result.duplicate)",
        ])
        return Self.json(text: result.jsonText)
    }

    private func authorize(_ manifest: Manifest, caller: Authenticator.Caller, kind: Kind) throws {
        if kind == .events, !manifest.isFromServer {
            throw APIError.badRequest("line 1: /v1/events takes the backend's records (a manifest without device_id, "
                                      + "or device_id \"server\"); upload device bundles to /v1/bundles")
        }
        guard caller.covers(appID: manifest.appID ?? "") else {
            throw APIError.forbidden("this token is for app \(caller.confinedApp ?? "?"), "
                                     + "not \(manifest.appID ?? "") (the manifest's app_id)")
        }
    }

    /// The most of a refused body worth reading to keep the connection open.
    static let drainedRemainder = 1 << 20

    /// The header with which an admin replays archived uploads: when they were originally received (epoch ms).
    static let receivedAtHeader = HTTPField.Name("Pushtrace-Received-At")!

    /// When the bundle was received: the reference for device clock correction (SPEC §5). Now, unless an admin
    /// (or anyone under `--no-auth`) replays an archived upload with `Pushtrace-Received-At`.
    static func receivedAt(of request: Request, caller: Authenticator.Caller) throws -> Int64 {
        guard let replayed = request.headers[receivedAtHeader] else { return Int64(Date().timeIntervalSince1970 * 1000) }
        if case .token(let token) = caller, token.scope != .admin {
            throw APIError.forbidden("only an admin token may set \(receivedAtHeader) (replaying archived uploads)")
        }
        guard let ms = InstantText.parse(replayed) else {
            throw APIError.badRequest("\(receivedAtHeader): \(replayed) is not epoch milliseconds or an ISO 8601 time")
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

    /// A header's value without the spaces and tabs around it, ASCII letters lowercased, byte by byte (Foundation's
    /// trimming and case folding were 3 % of an upload's handling).
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
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
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

    /// The acknowledgement of SPEC §8.
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
