import Foundation
import PushTraceRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One notification in the service extension with its content handler, over any content type: Apple's
/// `UNNotificationContent` in an app (``ServiceDelivery``), a plain value in the tests. ``deliver(_:)`` records
/// `service.delivered` and calls the handler; ``expire()`` (from `serviceExtensionTimeWillExpire()`) records
/// `service.expired` and delivers the best content so far. Whichever comes first wins; the handler is never called
/// twice.
///
/// Before the handler runs, every line recorded so far is written (at most a second's wait): iOS may end the
/// extension as soon as it has its content. After delivering, if ``Recorder/uploadsAfterDelivery(_:within:maxBytes:)``
/// was set, the extension sends its own records, within that bound.
public final class ServiceHandle<Content>: @unchecked Sendable {
    /// The notification's steps (downloads, attachments, logs).
    public let trace: ServiceTrace
    private let lock = NSLock()
    private var contentHandler: ((Content) -> Void)?
    private var best: Content
    private let copy: (Content) -> Content
    /// The aps interruption level of a content (`UNNotificationContent.interruptionLevel`), as the wire spells it.
    private let level: (Content) -> String?

    init(
        trace: ServiceTrace, original: Content, copy: @escaping (Content) -> Content,
        level: @escaping (Content) -> String? = { _ in nil }, contentHandler: @escaping (Content) -> Void
    ) {
        self.trace = trace
        best = original
        self.copy = copy
        self.level = level
        self.contentHandler = contentHandler
    }

    /// The notification's request identifier.
    public var notificationID: String { trace.notificationID }

    /// Content to deliver if time runs out before ``deliver(_:)`` (the request's own content until set). A copy is
    /// kept, so later changes to `content` do not race with an expiry.
    public func keepBestAttempt(_ content: Content) {
        let copy = copy(content)
        lock.withLock { best = copy }
    }

    /// The content ``expire()`` would deliver now.
    var bestAttempt: Content { lock.withLock { best } }

    /// Records `service.delivered` (with the content's interruption level) and calls the content handler with
    /// `content`. The handler is called exactly once
    /// between this and ``expire()``, whichever comes first, even if the trace was ended by hand.
    public func deliver(_ content: Content) {
        guard let handler = takeHandler() else { return }
        trace.delivered(interruptionLevel: level(content))
        trace.recorder.waitUntilWritten()
        handler(content)
        uploadAfterwards()
    }

    /// `serviceExtensionTimeWillExpire()`: records `service.expired` and delivers the best attempt.
    public func expire() {
        guard let handler = takeHandler() else { return }
        trace.expired()
        trace.recorder.waitUntilWritten(timeout: 0.2)  // iOS allows very little time after the expiry notice
        handler(lock.withLock { best })
    }

    /// Downloads `url` within `timeout` seconds in all (the monotonic clock times it), and keeps it under a file name
    /// with the extension the system needs to recognise an attachment (from the served MIME type, else the URL's):
    /// records `service.download`. A file of a type the system does not take, or over Apple's limit for its type
    /// (`AttachmentKind.maxBytes`), is removed and recorded as a failed `service.attachment`. Nil when any step
    /// failed (the records say why).
    public func downloadMedia(from url: URL, timeout: TimeInterval = 20, session: URLSession = .shared) async -> DownloadedMedia? {
        let started = DispatchTime.now()
        let file: URL, response: URLResponse
        do {
            let request = URLRequest(url: url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: timeout)
            (file, response) = try await withDeadline(seconds: timeout, expired: URLError(.timedOut)) {
                try await session.download(for: request)
            }
        } catch {
            trace.download(from: url, startedAt: started, response: nil, error: error)
            return nil
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.int64Value
        trace.download(from: url, startedAt: started, response: response, bytes: size)
        func fail(_ reason: String) -> DownloadedMedia? {
            trace.attachment(ok: false, bytes: size, error: reason)
            try? FileManager.default.removeItem(at: file)
            return nil
        }
        if let status = (response as? HTTPURLResponse)?.statusCode, status >= 400 {
            try? FileManager.default.removeItem(at: file)
            return nil  // the download record says it failed
        }
        // The served type first (a URL may end in `.php`, or in nothing), else the URL's own extension.
        let fileExtension = AttachmentKind.fileExtension(forMIME: response.mimeType) ?? url.pathExtension.lowercased()
        guard let kind = AttachmentKind(fileExtension: fileExtension) else {
            return fail("not an attachment type the system takes: \(response.mimeType ?? "no MIME type"), .\(url.pathExtension)")
        }
        if let size, size > kind.maxBytes {
            return fail("\(size) bytes: over the \(kind.limitText) the system takes for \(kind.rawValue) attachments")
        }
        let named = file.deletingLastPathComponent().appendingPathComponent(UUID().uuidString).appendingPathExtension(fileExtension)
        do {
            try FileManager.default.moveItem(at: file, to: named)
        } catch {
            return fail((error as NSError).localizedDescription)
        }
        return DownloadedMedia(file: named, kind: kind, bytes: size)
    }

    /// What an NSE whose only job is rich media delivers (``PushTraceServiceExtension``): the media `url` names,
    /// downloaded and handed to `attach`, which makes the content with it (and records `service.attachment`); the
    /// best attempt when there is no URL or a step failed (the records say which).
    func contentWithMedia(
        from url: URL?, timeout: TimeInterval = 20, session: URLSession = .shared,
        attach: (DownloadedMedia) -> Content?
    ) async -> Content {
        guard let url, let media = await downloadMedia(from: url, timeout: timeout, session: session) else { return bestAttempt }
        guard let content = attach(media) else {
            try? FileManager.default.removeItem(at: media.file)
            return bestAttempt
        }
        return content
    }

    private func takeHandler() -> ((Content) -> Void)? {
        lock.withLock {
            defer { contentHandler = nil }
            return contentHandler
        }
    }

    /// The extension's own upload, after the handler was called. iOS may suspend an extension once it has
    /// delivered; on Apple platforms `performExpiringActivity` asks for the time the upload needs (it is bounded
    /// anyway) and says when the system takes it back, and the upload is then cancelled, before it could hold the
    /// pack lock while suspended.
    private func uploadAfterwards() {
        let recorder = trace.recorder
        guard recorder.uploadsOwnRecords else { return }
        let upload = Task.detached(priority: .utility) { await recorder.uploadOwnRecords() }
        #if canImport(Darwin)
            ProcessInfo.processInfo.performExpiringActivity(withReason: "pushtrace: sending this notification's steps") { expired in
                guard !expired else { return upload.cancel() }
                let done = DispatchSemaphore(value: 0)
                Task.detached {
                    _ = await upload.value
                    done.signal()
                }
                done.wait()
            }
        #endif
    }
}

/// A downloaded attachment file, named with the extension its type needs.
public struct DownloadedMedia: Sendable, Hashable {
    /// The file, in the download's temporary folder.
    public let file: URL
    /// What the system takes it as.
    public let kind: AttachmentKind
    /// Its size, when known.
    public let bytes: Int64?
}

/// Where a push payload names its media: the keys the common push services and backends use.
enum MediaURL {
    /// The keys tried in order, at the top level of the payload (outside `aps`).
    static let keys = ["image-url", "image_url", "media-url", "media_url", "attachment-url", "attachment_url", "image", "att"]

    /// The first http(s) URL under one of ``keys`` (a string, or `{"url": …}`, or OneSignal's `att` dictionary),
    /// else Firebase's `fcm_options.image`; nil when there is none.
    static func find(in userInfo: [AnyHashable: Any]) -> URL? {
        func url(_ value: Any?) -> URL? {
            if let text = value as? String, let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") {
                return url
            }
            if let object = value as? [String: Any] { return url(object["url"]) ?? object.values.lazy.compactMap { url($0) }.first }
            return nil
        }
        for key in keys { if let found = url(userInfo[key]) { return found } }
        return url((userInfo["fcm_options"] as? [String: Any])?["image"])
    }
}
