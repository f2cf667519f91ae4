import Foundation
import PushTraceGzip
import PushTraceRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The main app's side of delivery: packs what the three processes recorded into bundles on disk, then sends them
/// to the server (docs/protocol.md#bundles, `POST /v1/bundles`).
///
/// Nothing is lost and nothing is sent twice as new:
/// - a bundle is written to `outbox/` (and the upload cursors moved past its records) before any attempt to send;
/// - it is deleted only after a 200 (a duplicate acknowledgement included);
/// - 429 and 503 are retried after `Retry-After` (at least), other failures after an exponential backoff with
///   jitter; a bundle the server refuses as malformed (400, 413, 415) is set aside in `rejected/` (bounded) instead
///   of being retried forever;
/// - after a crash the same bundle is sent again with the same `bundle_id`, which the server stores once.
///
/// Call `upload()` when the app becomes active, from a background task, or on a timer; each call packs new records
/// and sends what is due.
public actor Uploader {
    public let configuration: UploaderConfiguration
    public let container: AgentContainer
    let recorderToSeal: Recorder?
    private let session: URLSession
    let clock: @Sendable () -> Int64
    private var random = SystemRandomNumberGenerator()
    /// The pass under way, which overlapping `upload()` calls share.
    private var pass: Pass?

    /// - Parameters:
    ///   - recorder: the app's own recorder: its file is sealed before packing, and the uploader's notes go to it.
    ///   - clock: Unix epoch milliseconds; the system clock unless a test sets its own.
    ///
    /// Throws ``AgentError/badConfiguration(_:)`` for a server that is not an http(s) URL with a host, or an empty
    /// token or app ID: mistakes that would otherwise only show as uploads failing for ever.
    public init(
        configuration: UploaderConfiguration, container: AgentContainer, recorder: Recorder? = nil,
        session: URLSession = .shared, clock: @escaping @Sendable () -> Int64 = Recorder.systemClock
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.container = container
        self.recorderToSeal = recorder
        self.session = session
        self.clock = clock
    }

    /// Packs new records into bundles and sends every bundle that is due, oldest first. Stops at the first bundle
    /// the server asks to wait for (429, 503) or cannot take (network, 5xx, 401, 403): the rest wait with it.
    ///
    /// Calls that overlap share one pass (and its report), so no bundle is sent twice by this process; a bundle
    /// another process is sending is skipped. Cancelled (when every caller waiting for it is), a pass stops between
    /// requests without counting a failure.
    ///
    /// A call is the app's say-so that it has time: packing, refused while background time was running out
    /// (``upload(in:)``), is allowed again.
    @discardableResult
    public func upload() async -> UploadReport {
        PackLockHolders.of(container).resume()
        if let pass {
            pass.waiters.join()
            return await Self.await(pass)
        }
        let current = Pass(task: Task { await self.runPass(only: nil, maxBytes: nil, deadline: nil) })
        pass = current
        defer { pass = nil }
        return await Self.await(current)
    }

    /// One pass and how many callers wait for it: it is cancelled only when every one of them is.
    struct Pass: Sendable {
        let task: Task<UploadReport, Never>
        let waiters = Waiters()
    }

    final class Waiters: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 1

        func join() { lock.withLock { count += 1 } }
        /// One caller gave up; true when none waits any more.
        func leave() -> Bool {
            lock.withLock {
                count -= 1
                return count == 0
            }
        }
    }

    private static func await(_ pass: Pass) async -> UploadReport {
        await withTaskCancellationHandler {
            await pass.task.value
        } onCancel: {
            if pass.waiters.leave() { pass.task.cancel() }
        }
    }

    /// One pass of its own that ends within `seconds` (each request's timeout what is left of them), for time the
    /// system lends: background time about to run out. Overlapping passes never send one bundle twice (each bundle
    /// is held by the pass sending it).
    package func upload(within seconds: TimeInterval) async -> UploadReport {
        PackLockHolders.of(container).resume()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1_000_000_000)
        return await Self.await(Pass(task: Task { await self.runPass(only: nil, maxBytes: nil, deadline: deadline) }))
    }

    /// Packs this process's own records (at most `maxBytes` of them) and sends them within `seconds`: the service
    /// extension's upload after a delivery. Bundles older than these stay for the app's ``upload()``.
    func uploadOwnRecords(within seconds: TimeInterval, maxBytes: Int64) async -> UploadReport {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1_000_000_000)
        let own = recorderToSeal.map { "\($0.launch)-" }
        return await Self.await(Pass(task: Task { await self.runPass(only: own, maxBytes: maxBytes, deadline: deadline) }))
    }

    private func runPass(only prefix: String?, maxBytes: Int64?, deadline: UInt64?) async -> UploadReport {
        var report = UploadReport()
        let lock = PackLock(container: container)
        // The extension does not wait for the app's packing: what the app packs, it also sends.
        let packed: [String]?
        do {
            // Never waiting for the lock longer than the time the pass has.
            let left = deadline.map { TimeInterval(Int64($0) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1e9 / 2 }
            let wait = min(prefix == nil ? 5 : 0.2, max(0, left ?? .infinity))
            packed = try await lock.withLock(wait: wait) { try pack(only: prefix, maxBytes: maxBytes, deadline: deadline) }
        } catch {
            packed = []
            report.lastError = "could not write a bundle: \(error)"
        }
        report.packed = packed?.count ?? 0
        let candidates = Outbox(container: container).bundles().filter { prefix == nil || packed?.contains($0.metadata.bundleID) == true }
        for bundle in candidates {
            if Task.isCancelled { break }
            guard bundle.metadata.isDue(at: clock(), longest: Int64(configuration.maxBackoff * 1000)) else { break }
            let remaining = deadline.map { TimeInterval(Int64($0) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1e9 }
            if let remaining, remaining <= 0.05 { break }
            guard var held = await hold(bundle, for: remaining ?? configuration.requestTimeout, lock: lock) else { continue }
            // A cancelled attempt releases its hold and counts nothing; an answer that came is acted on even if
            // the pass was cancelled meanwhile (a stored bundle must not be sent again).
            guard let outcome = await send(held, timeout: remaining) else {
                release(&held)
                break
            }
            switch outcome {
            case .stored(let duplicate):
                held.remove()
                report.sent += 1
                report.duplicates += duplicate ? 1 : 0
                continue
            case .refused(let reason):
                setAside(held, reason: reason)
                report.setAside += 1
                report.lastError = reason
                continue
            case .retry(let reason, let after):
                held.metadata.attempts += 1
                let seconds = min(configuration.maxBackoff, max(after ?? 0, backoff(attempt: held.metadata.attempts)))
                let now = clock()
                held.metadata.nextAttemptAt = now + Int64(seconds * 1000)
                held.metadata.waitSetAt = now
                held.metadata.heldUntil = nil
                try? held.save()
                report.lastError = reason
            }
            break
        }
        let waiting = Outbox(container: container).bundles()
        report.waiting = waiting.count
        report.nextAttemptAt = waiting.first?.metadata.nextAttemptAt
        return report
    }

    /// Claims `bundle` for one attempt lasting at most `seconds`, under the pack lock; nil when another upload holds
    /// it, it is gone, or the lock could not be had.
    private func hold(_ bundle: OutboxBundle, for seconds: TimeInterval, lock: PackLock) async -> OutboxBundle? {
        await lock.withLock(wait: 2) { () -> OutboxBundle? in
            guard var current = Outbox(container: container).bundle(at: bundle.metadataURL) else { return nil }
            let now = clock()
            guard !current.metadata.isHeld(at: now) else { return nil }
            current.metadata.heldUntil = now + min(OutboxBundle.longestHold, Int64((seconds + 5) * 1000))
            guard (try? current.save()) != nil else { return nil }
            return current
        } ?? nil
    }

    private func release(_ bundle: inout OutboxBundle) {
        guard FileManager.default.fileExists(atPath: bundle.metadataURL.path) else { return }
        bundle.metadata.heldUntil = nil
        try? bundle.save()
    }

    // MARK: Sending

    private enum Outcome: Equatable {
        case stored(duplicate: Bool)
        case refused(String)
        case retry(String, after: TimeInterval?)
    }

    /// One attempt; nil when it was cancelled (by the caller, or by the extension's deadline): not a failure.
    private func send(_ bundle: OutboxBundle, timeout: TimeInterval?) async -> Outcome? {
        let body: Data
        do {
            body = try manifestMember(bundleID: bundle.metadata.bundleID) + Data(contentsOf: bundle.bodyURL)
        } catch {
            return .refused("its body could not be read: \(error)")
        }
        var request = URLRequest(url: configuration.server.appendingPathComponent("v1/bundles"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(configuration.token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Content-Type")
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        request.httpBody = body
        request.timeoutInterval = timeout.map { max(0.1, $0) } ?? configuration.requestTimeout
        let data: Data, response: HTTPURLResponse
        do {
            let (answer, urlResponse) = try await Self.data(for: request, session: session, within: timeout)
            guard let http = urlResponse as? HTTPURLResponse else { return .retry("not an HTTP response", after: nil) }
            (data, response) = (answer, http)
        } catch is CancellationError {
            return nil
        } catch let error as URLError where error.code == .cancelled {
            return nil
        } catch {
            if Task.isCancelled { return nil }
            return .retry("\(error.localizedDescription)", after: nil)
        }
        let message = Self.message(data)
        switch response.statusCode {
        case 200:
            let answer = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            return .stored(duplicate: answer?["duplicate"] as? Bool ?? false)
        case 400, 413, 415:
            return .refused("HTTP \(response.statusCode): \(message)")
        case 429, 503:
            return .retry(
                "HTTP \(response.statusCode): \(message)",
                after: Self.retryAfter(
                    response.value(forHTTPHeaderField: "Retry-After"), now: clock(),
                    limit: configuration.maxBackoff))
        default:
            return .retry("HTTP \(response.statusCode): \(message)", after: nil)
        }
    }

    /// The manifest as the bundle's first gzip member, stamped with the time of this attempt (`uploaded_at` is how
    /// the server measures this device's clock, so it must be the sending time, not the packing time).
    private func manifestMember(bundleID: String) -> Data {
        let manifest = JSONLine([
            "type": "manifest", "schema": .int(PushTraceVersion.bundleSchema), "bundle_id": .string(bundleID),
            "app_id": .string(configuration.appID),
            "app_version": configuration.appVersion.map(JSONValue.string), "build": configuration.build.map(JSONValue.string),
            "os": configuration.os.map(JSONValue.string), "device_model": configuration.deviceModel.map(JSONValue.string),
            "device_id": .string(DeviceIdentity.id(in: container)), "uploaded_at": .int(clock()),
            "sdk": .string(Self.sdk),
        ])
        return Data(Deflater.gzip(manifest.bytes + [UInt8(ascii: "\n")]))
    }

    /// The agent's name and version, sent in every manifest.
    public static let sdk = PushTraceVersion.sdk

    /// Seconds to wait after the `attempt`-th failure: 2, 4, 8, … up to `maxBackoff`, each between half and all of
    /// that ("equal jitter"), so that many devices failing together do not come back together.
    private func backoff(attempt: Int) -> TimeInterval {
        let ceiling = max(1, min(configuration.maxBackoff, 2 * pow(2, Double(min(max(attempt, 1), 30) - 1))))
        return ceiling / 2 + Double.random(in: 0...(ceiling / 2), using: &random)
    }

    /// `Retry-After` as seconds or an HTTP date, within `0...limit`; nil when it says nothing usable (absent, `nan`,
    /// not a number or a date). Any server may send any text here; none may stop or crash the app.
    static func retryAfter(_ value: String?, now: Int64, limit: TimeInterval) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty, value.utf8.count <= 64 else { return nil }
        func bounded(_ seconds: TimeInterval) -> TimeInterval? {
            seconds.isNaN ? nil : min(max(0, seconds), max(0, limit))
        }
        if let seconds = TimeInterval(value) { return bounded(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).flatMap { bounded($0.timeIntervalSince1970 - Double(now) / 1000) }
    }

    /// `session.data(for:)`, cancelled when `seconds` run out (the extension's time bound).
    private static func data(
        for request: URLRequest, session: URLSession, within seconds: TimeInterval?
    ) async throws
        -> (Data, URLResponse)
    {
        guard let seconds else { return try await session.data(for: request) }
        return try await withDeadline(seconds: seconds, expired: CancellationError()) { try await session.data(for: request) }
    }

    private static func message(_ data: Data) -> String {
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["message"] as? String ?? String(decoding: data.prefix(200), as: UTF8.self)
    }

    private func setAside(_ bundle: OutboxBundle, reason: String) {
        var kept = bundle
        kept.metadata.refusal = reason
        let name = bundle.metadataURL.deletingPathExtension().lastPathComponent
        let target = OutboxBundle(metadataURL: container.rejected.appendingPathComponent(name + ".json"), metadata: kept.metadata)
        try? FileManager.default.moveItem(at: bundle.bodyURL, to: target.bodyURL)
        try? target.save()
        bundle.remove()
        recorderToSeal?.log(
            "pushtrace: the server refused bundle \(bundle.metadata.bundleID) (\(reason)); "
                + "it is kept in pushtrace/rejected/ and not retried", level: .error)
        for old in Outbox(folder: container.rejected).bundles().dropLast(configuration.maxRejectedBundles) { old.remove() }
    }
}
