import Foundation

/// A bundle written to `outbox/` and not yet acknowledged: `<created>-<bundle_id>.gz` (the records, one gzip member
/// per source file) and its `.json` metadata, written last: a body without metadata is an interrupted write.
struct OutboxBundle {
    struct Metadata: Codable, Equatable {
        var bundleID: String
        var createdAt: Int64
        /// Lines in the body (records of every process, the repeated config records included).
        var records: Int
        var attempts = 0
        /// Unix epoch milliseconds before which the bundle is not sent again (backoff, `Retry-After`).
        var nextAttemptAt: Int64 = 0
        /// When that wait was set. A clock that now reads earlier has moved backwards: the wait no longer counts.
        var waitSetAt: Int64?
        /// How far the bundle took each source file: applied to the upload cursors once more after a crash.
        var advances: [String: Int64]
        /// Sealed files the bundle took to their end (deleted once the bundle is written).
        var consumed: [String]
        /// Why the server refused it, for a bundle in `rejected/`.
        var refusal: String?
        /// Unix epoch milliseconds until which an upload (in this process or another) holds the bundle: no other
        /// upload sends it, and the size bound's cleanup does not delete it.
        var heldUntil: Int64?

        enum CodingKeys: String, CodingKey {
            case bundleID = "bundle_id", createdAt = "created_at", records, attempts, nextAttemptAt = "next_attempt_at"
            case advances, consumed, refusal, heldUntil = "held_until", waitSetAt = "wait_set_at"
        }

        /// Whether the bundle may be sent at `now`: its wait is over, or the clock moved backwards since the wait was
        /// set (then the outbox would stall until the clock caught up), or the wait is longer than any the uploader
        /// sets (`longest`, ms), which only a clock moved backwards explains.
        func isDue(at now: Int64, longest: Int64) -> Bool {
            if now >= nextAttemptAt { return true }
            if let waitSetAt, now < waitSetAt { return true }
            return nextAttemptAt - now > longest + 60_000
        }

        /// Whether an upload holds the bundle at `now`. A hold further ahead than any upload takes means the clock
        /// moved backwards since it was set: it no longer counts.
        func isHeld(at now: Int64) -> Bool {
            guard let heldUntil else { return false }
            return heldUntil > now && heldUntil - now <= OutboxBundle.longestHold
        }
    }

    let metadataURL: URL
    var metadata: Metadata
    var bodyURL: URL { metadataURL.deletingPathExtension().appendingPathExtension("gz") }
    var bodySize: Int64 { ((try? FileManager.default.attributesOfItem(atPath: bodyURL.path))?[.size] as? NSNumber)?.int64Value ?? 0 }

    /// The longest an upload holds a bundle: the request's timeout and some.
    static let longestHold: Int64 = 180_000

    static func name(createdAt: Int64, bundleID: String) -> String { String(format: "%013lld", createdAt) + "-" + bundleID }

    func save() throws {
        try JSONEncoder().encode(metadata).writeProtected(to: metadataURL)
    }

    func remove() {
        try? FileManager.default.removeItem(at: bodyURL)
        try? FileManager.default.removeItem(at: metadataURL)
    }
}

/// The bundles in a folder of the container (`outbox/` or `rejected/`), oldest first.
struct Outbox {
    let folder: URL

    init(container: AgentContainer) { folder = container.outbox }
    init(folder: URL) { self.folder = folder }

    func bundles() -> [OutboxBundle] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap { bundle(at: folder.appendingPathComponent($0)) }
    }

    /// The bundle whose metadata is at `url`, as it is on disk now; nil when it is gone.
    func bundle(at url: URL) -> OutboxBundle? {
        guard let metadata = try? JSONDecoder().decode(OutboxBundle.Metadata.self, from: Data(contentsOf: url)) else { return nil }
        return OutboxBundle(metadataURL: url, metadata: metadata)
    }
}
