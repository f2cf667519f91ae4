import Foundation
import PushTraceCore

/// Ingests bundle files (gzip or plain NDJSON) exactly as the server would, decoding on one thread while the
/// store writes on another. Each file is one bundle, stored all-or-nothing; many share a commit.
public struct FileIngestor: Sendable {
    /// When a file is taken to have been received (the reference for device clock correction, SPEC §5).
    public enum ReceivedAt: Sendable, Hashable {
        /// The file's last modification: when it was written to disk on arrival.
        case fileModificationTime
        /// The moment of ingestion.
        case now
        /// A fixed instant, epoch milliseconds.
        case fixed(Int64)
    }

    /// What became of one file.
    public enum Outcome: Sendable {
        case stored(IngestResult)
        /// The whole file was refused; nothing of it was stored.
        case refused(BundleError)
        /// The file could not be read.
        case unreadable(String)
    }

    public let store: Store
    public var limits: BundleLimits
    public var receivedAt: ReceivedAt

    public init(store: Store, limits: BundleLimits = .default, receivedAt: ReceivedAt = .fileModificationTime) {
        self.store = store
        self.limits = limits
        self.receivedAt = receivedAt
    }

    private enum Message: Sendable {
        case begin(receivedAt: Int64)
        case items([BundleItem])
        case end
        case refused(BundleError)
        case unreadable(String)
    }

    /// Ingests `paths` in order, calling `report` with each file's outcome once it is committed (or refused).
    /// Store failures (disk full, locked database) are thrown; what was reported before stays committed.
    public func ingest(paths: [String], report: (String, Outcome) -> Void) throws {
        let queue = BoundedQueue<Message>(capacity: 64)
        let limits = self.limits, receivedAt = self.receivedAt
        let decoding = Thread {
            for path in paths where !queue.isClosed {
                Self.decode(path: path, limits: limits, receivedAt: receivedAt, into: queue)
            }
        }
        decoding.stackSize = 1 << 20
        decoding.start()
        // However this ends (a store failure included), the decoding thread is released, not left blocked.
        defer { queue.close() }
        var next = 0
        while next < paths.count {
            // Many small files share one commit; each file is still stored all-or-nothing (a savepoint each), and
            // its outcome is reported only after the commit.
            var outcomes: [(String, Outcome)] = []
            let groupStart = Date()
            try store.inGroupCommit { group in
                while next < paths.count, outcomes.count < 10_000, Date().timeIntervalSince(groupStart) < 2 {
                    let path = paths[next]
                    next += 1
                    outcomes.append((path, try ingestOne(path: path, from: queue, into: group)))
                }
            }
            for (path, outcome) in outcomes { report(path, outcome) }
        }
    }

    private func ingestOne(path: String, from queue: BoundedQueue<Message>, into group: GroupCommit) throws -> Outcome {
        switch queue.pop() {
        case .unreadable(let why): return .unreadable(why)
        case .refused(let error): return .refused(error)
        case .items, .end: preconditionFailure("a file's messages arrived before its beginning")
        case .begin(let receivedAt):
            do {
                let stored = try group.ingest(source: (path as NSString).lastPathComponent, receivedAt: receivedAt) { sink in
                    while true {
                        switch queue.pop() {
                        case .items(let items): for item in items { try sink(item) }
                        case .end: return
                        case .refused(let error): throw error
                        case .begin, .unreadable: preconditionFailure("a file's messages interleaved")
                        }
                    }
                }
                return .stored(stored)
            } catch let error as BundleError {
                return .refused(error)
            }
        }
    }

    private static func decode(path: String, limits: BundleLimits, receivedAt: ReceivedAt, into queue: BoundedQueue<Message>) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            queue.push(.unreadable(FileManager.default.fileExists(atPath: path) ? "cannot be read (permissions?)"
                                   : "no such file"))
            return
        }
        defer { try? handle.close() }
        let instant: Int64
        switch receivedAt {
        case .fixed(let ms): instant = ms
        case .now: instant = Int64(Date().timeIntervalSince1970 * 1000)
        case .fileModificationTime:
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            instant = Int64(modified.timeIntervalSince1970 * 1000)
        }
        queue.push(.begin(receivedAt: instant))
        let decoder = BundleDecoder(encoding: .sniff, limits: limits)
        var batch: [BundleItem] = []
        batch.reserveCapacity(512)
        let emit: (BundleItem) -> Void = { item in
            batch.append(item)
            if batch.count == 512 {
                queue.push(.items(batch))
                batch.removeAll(keepingCapacity: true)
            }
        }
        do {
            while !queue.isClosed, let chunk = try handle.read(upToCount: 256 * 1024), !chunk.isEmpty {
                try chunk.withUnsafeBytes { try decoder.consume($0, emit) }
            }
            try decoder.finish(emit)
            if !batch.isEmpty { queue.push(.items(batch)) }
            queue.push(.end)
        } catch let error as BundleError {
            queue.push(.refused(error))
        } catch {
            queue.push(.refused(BundleError(.undecodable, "reading failed: \(error.localizedDescription)")))
        }
    }
}
