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
        /// How far the bundle took each source file: applied to the upload cursors once more after a crash.
        var advances: [String: Int64]
        /// Sealed files the bundle took to their end (deleted once the bundle is written).
        var consumed: [String]
        /// Why the server refused it, for a bundle in `rejected/`.
        var refusal: String?

        enum CodingKeys: String, CodingKey {
            case bundleID = "bundle_id", createdAt = "created_at", records, attempts, nextAttemptAt = "next_attempt_at"
            case advances, consumed, refusal
        }
    }

    let metadataURL: URL
    var metadata: Metadata
    var bodyURL: URL { metadataURL.deletingPathExtension().appendingPathExtension("gz") }
    var bodySize: Int64 { ((try? FileManager.default.attributesOfItem(atPath: bodyURL.path))?[.size] as? NSNumber)?.int64Value ?? 0 }

    static func name(createdAt: Int64, bundleID: String) -> String { String(format: "%013lld", createdAt) + "-" + bundleID }

    func save() throws {
        try JSONEncoder().encode(metadata).write(to: metadataURL, options: .atomic)
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
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap { name in
            let url = folder.appendingPathComponent(name)
            guard let metadata = try? JSONDecoder().decode(OutboxBundle.Metadata.self, from: Data(contentsOf: url)) else {
                return nil
            }
            return OutboxBundle(metadataURL: url, metadata: metadata)
        }
    }
}
