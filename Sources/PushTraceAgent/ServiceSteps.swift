import PushTraceRecords

/// The Notification Service Extension's steps (SPEC §3): `recorder.service.received(…)`.
///
/// `received` marks the launch as working on the notification until `delivered` or `expired`: if the process dies
/// in between (the ~24 MB limit, a crash), its next launch records `service.abnormal_exit` for it.
public struct ServiceSteps: Sendable {
    let recorder: Recorder

    /// `didReceive(_:withContentHandler:)` was called.
    public func received(_ notificationID: String, category: String? = nil) {
        recorder.beginWork(on: notificationID)
        recorder.event(.serviceReceived, notificationID: notificationID, ["category": category.map(JSONValue.string)])
    }

    /// An attachment download finished, well or not (`error` or an HTTP status ≥ 400 says it failed).
    public func download(_ notificationID: String, urlHost: String, durationMs: Int64, httpStatus: Int? = nil,
                         bytes: Int64? = nil, mime: String? = nil, error: String? = nil) {
        recorder.event(.serviceDownload, notificationID: notificationID, [
            "url_host": .string(urlHost), "duration_ms": .int(durationMs), "http_status": httpStatus.map { .int(Int64($0)) },
            "bytes": bytes.map(JSONValue.int), "mime": mime.map(JSONValue.string), "error": error.map(JSONValue.string),
        ])
        recorder.beginWork(on: notificationID)  // the footprint after the download, for an abnormal exit report
    }

    /// `UNNotificationAttachment(identifier:url:options:)` was tried.
    public func attachment(_ notificationID: String, ok: Bool, uti: String? = nil, bytes: Int64? = nil,
                           pixelWidth: Int? = nil, pixelHeight: Int? = nil, error: String? = nil) {
        recorder.event(.serviceAttachment, notificationID: notificationID, [
            "ok": .bool(ok), "uti": uti.map(JSONValue.string), "bytes": bytes.map(JSONValue.int),
            "pixel_width": pixelWidth.map { .int(Int64($0)) }, "pixel_height": pixelHeight.map { .int(Int64($0)) },
            "error": error.map(JSONValue.string),
        ])
    }

    /// The content handler was called, `elapsedMs` after `didReceive`.
    public func delivered(_ notificationID: String, elapsedMs: Int64) {
        recorder.event(.serviceDelivered, notificationID: notificationID, ["elapsed_ms": .int(elapsedMs)])
        recorder.endWork()
    }

    /// `serviceExtensionTimeWillExpire()` was called, `elapsedMs` after `didReceive`.
    public func expired(_ notificationID: String, elapsedMs: Int64) {
        recorder.event(.serviceExpired, notificationID: notificationID, ["elapsed_ms": .int(elapsedMs)])
        recorder.endWork()
    }
}

extension Recorder {
    /// The service extension's steps.
    public var service: ServiceSteps { ServiceSteps(recorder: self) }
}
