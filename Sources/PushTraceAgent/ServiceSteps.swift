import Foundation
import PushTraceRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Notification Service Extension's steps (docs/protocol.md#events), by notification ID: `recorder.service.received(…)`.
/// ``begin(_:category:)`` gives a ``ServiceTrace`` that carries the ID and the elapsed time itself.
///
/// `received` marks the notification in flight until `delivered` or `expired`: if the process dies in between (the
/// ~24 MB limit, a crash), the next recorder to start records `service.abnormal_exit` for it. Any number of
/// notifications can be in flight in one process.
public struct ServiceSteps: Sendable {
    let recorder: Recorder

    /// `didReceive(_:withContentHandler:)` was called: records `service.received` and returns the notification's
    /// handle.
    public func begin(_ notificationID: String, category: String? = nil) -> ServiceTrace {
        let trace = ServiceTrace(recorder: recorder, notificationID: notificationID)
        received(notificationID, category: category)
        return trace
    }

    /// `didReceive(_:withContentHandler:)` was called.
    public func received(_ notificationID: String, category: String? = nil) {
        recorder.beginWork(on: notificationID)
        recorder.event(.serviceReceived, notificationID: notificationID, ["category": category.map(JSONValue.string)])
    }

    /// An attachment download finished, well or not (`error` or an HTTP status ≥ 400 says it failed).
    public func download(
        _ notificationID: String, urlHost: String, durationMs: Int64, httpStatus: Int? = nil,
        bytes: Int64? = nil, mime: String? = nil, error: String? = nil
    ) {
        recorder.event(
            .serviceDownload, notificationID: notificationID,
            [
                "url_host": .string(urlHost), "duration_ms": .int(durationMs), "http_status": httpStatus.map { .int(Int64($0)) },
                "bytes": bytes.map(JSONValue.int), "mime": mime.map(JSONValue.string), "error": error.map(JSONValue.string),
            ])
        recorder.beginWork(on: notificationID)  // the footprint after the download, for an abnormal exit report
    }

    /// `UNNotificationAttachment(identifier:url:options:)` was tried.
    public func attachment(
        _ notificationID: String, ok: Bool, uti: String? = nil, bytes: Int64? = nil,
        pixelWidth: Int? = nil, pixelHeight: Int? = nil, error: String? = nil
    ) {
        recorder.event(
            .serviceAttachment, notificationID: notificationID,
            [
                "ok": .bool(ok), "uti": uti.map(JSONValue.string), "bytes": bytes.map(JSONValue.int),
                "pixel_width": pixelWidth.map { .int(Int64($0)) }, "pixel_height": pixelHeight.map { .int(Int64($0)) },
                "error": error.map(JSONValue.string),
            ])
    }

    /// The content handler was called, `elapsedMs` after `didReceive`, with content of `interruptionLevel` (the aps
    /// `interruption-level` as the wire spells it: `passive`, `active`, `time-sensitive`, `critical`).
    public func delivered(_ notificationID: String, elapsedMs: Int64, interruptionLevel: String? = nil) {
        recorder.event(
            .serviceDelivered, notificationID: notificationID,
            ["elapsed_ms": .int(elapsedMs), "interruption_level": interruptionLevel.map(JSONValue.string)])
        recorder.endWork(on: notificationID)
    }

    /// `serviceExtensionTimeWillExpire()` was called, `elapsedMs` after `didReceive`.
    public func expired(_ notificationID: String, elapsedMs: Int64) {
        recorder.event(.serviceExpired, notificationID: notificationID, ["elapsed_ms": .int(elapsedMs)])
        recorder.endWork(on: notificationID)
    }
}

/// One notification in the service extension, from `didReceive` to its content handler: it knows the ID and when
/// it began, so no call passes them by hand, and it ends exactly once (`delivered` or `expired`, whichever is first).
public final class ServiceTrace: @unchecked Sendable {
    /// The notification's request identifier.
    public let notificationID: String
    let recorder: Recorder
    private let start = DispatchTime.now()
    private let lock = NSLock()
    private var ended = false

    init(recorder: Recorder, notificationID: String) {
        self.recorder = recorder
        self.notificationID = notificationID
    }

    /// Milliseconds since `didReceive`, on the monotonic clock.
    public var elapsedMs: Int64 { Int64((DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000) }

    /// Whether the notification has been delivered or has expired.
    public var hasEnded: Bool { lock.withLock { ended } }

    /// An attachment download finished, well or not. `durationMs` is how long it took; `error` or an HTTP status
    /// ≥ 400 says it failed.
    public func download(
        host: String, durationMs: Int64, httpStatus: Int? = nil, bytes: Int64? = nil, mime: String? = nil,
        error: String? = nil
    ) {
        recorder.service.download(
            notificationID, urlHost: host, durationMs: durationMs, httpStatus: httpStatus, bytes: bytes,
            mime: mime, error: error)
    }

    /// A download of `url` that began at `startedAt` ended with `response` (or `error`): records
    /// `service.download` with its duration, HTTP status, size and type.
    public func download(from url: URL, startedAt: DispatchTime, response: URLResponse?, bytes: Int64? = nil, error: Error? = nil) {
        let http = response as? HTTPURLResponse
        let length = response.map(\.expectedContentLength).flatMap { $0 >= 0 ? $0 : nil }
        download(
            host: url.host ?? "", durationMs: Int64((DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1_000_000),
            httpStatus: http?.statusCode, bytes: bytes ?? length, mime: response?.mimeType,
            error: error.map { ($0 as NSError).localizedDescription })
    }

    /// `UNNotificationAttachment(identifier:url:options:)` was tried.
    public func attachment(
        ok: Bool, uti: String? = nil, bytes: Int64? = nil, pixelWidth: Int? = nil, pixelHeight: Int? = nil,
        error: String? = nil
    ) {
        recorder.service.attachment(
            notificationID, ok: ok, uti: uti, bytes: bytes, pixelWidth: pixelWidth,
            pixelHeight: pixelHeight, error: error)
    }

    /// A log line about this notification.
    public func log(_ message: String, level: Recorder.LogLevel = .info) {
        recorder.log(message, level: level, notificationID: notificationID)
    }

    /// The content handler is being called now. Records `service.delivered` with the elapsed time (and the level of
    /// the content handed back, when given); false (and
    /// nothing recorded) when the notification had already ended.
    @discardableResult
    public func delivered(interruptionLevel: String? = nil) -> Bool {
        guard end() else { return false }
        recorder.service.delivered(notificationID, elapsedMs: elapsedMs, interruptionLevel: interruptionLevel)
        return true
    }

    /// `serviceExtensionTimeWillExpire()` was called. Records `service.expired`; false when already ended.
    @discardableResult
    public func expired() -> Bool {
        guard end() else { return false }
        recorder.service.expired(notificationID, elapsedMs: elapsedMs)
        return true
    }

    private func end() -> Bool {
        lock.withLock {
            defer { ended = true }
            return !ended
        }
    }
}

extension Recorder {
    /// The service extension's steps.
    public var service: ServiceSteps { ServiceSteps(recorder: self) }
}
