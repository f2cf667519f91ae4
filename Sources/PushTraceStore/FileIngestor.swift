import Foundation
import PushTraceCore

/// Ingests bundle files (gzip or plain NDJSON) exactly as the server would, decoding on one thread while the
/// store writes on another. Each file is one bundle, stored all-or-nothing; many share a commit.
public struct FileIngestor: Sendable {
    /// When a file is taken to have been received (the reference for device clock correction, docs/protocol.md#clocks).
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

    public let store: any TraceWriter
    public var limits: BundleLimits
    public var receivedAt: ReceivedAt

    public init(store: any TraceWriter, limits: BundleLimits = .default, receivedAt: ReceivedAt = .fileModificationTime) {
        self.store = store
        self.limits = limits
        self.receivedAt = receivedAt
    }

    /// Ingests `paths` in order, calling `report` with each file's outcome once it is committed (or refused).
    /// Store failures (disk full, locked database) are thrown, as is an error `report` throws, which stops the
    /// ingest; what was reported before stays committed.
    public func ingest(paths: [String], report: (String, Outcome) throws -> Void) throws {
        // Decoding (inflate, UTF-8, JSON) costs about as much as storing, so it runs on as many threads as there are
        // cores beside the one writer: file i is decoded by thread i % n, and the writer takes the files in order.
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
        let queues = (0..<lanes).map { _ in BoundedQueue<[Message]>(capacity: 8) }
        let spent = (0..<lanes).map { _ in SpentBatches() }
        let limits = self.limits, receivedAt = self.receivedAt
        for (lane, queue) in queues.enumerated() {
            let decoding = Thread { [spent = spent[lane]] in
                Thread.current.name = "pt-decode-\(lane)"
                let batcher = MessageBatcher(queue: queue, spent: spent)
                var buffer = ReadBuffer()
                for index in stride(from: lane, to: paths.count, by: lanes) where !queue.isClosed {
                    Self.decode(path: paths[index], limits: limits, receivedAt: receivedAt, buffer: &buffer, into: batcher)
                }
                batcher.flush()
            }
            decoding.stackSize = 1 << 20
            decoding.start()
        }
        // However this ends (a store failure included), the decoding threads are released, not left blocked.
        defer { for queue in queues { queue.close() } }
        let readers = zip(queues, spent).map(MessageReader.init)
        var next = 0
        let session = try store.makeIngestSession(deferringSummaries: false)
        while next < paths.count {
            // Many small files share one commit; each file is still stored all-or-nothing (a savepoint each), and
            // its outcome is reported only after the commit.
            var outcomes: [(String, Outcome)] = []
            let groupStart = Date()
            try session.inGroupCommit { group in
                while next < paths.count, outcomes.count < 10_000, Date().timeIntervalSince(groupStart) < 2 {
                    let path = paths[next]
                    next += 1
                    outcomes.append((path, try ingestOne(path: path, from: readers[(next - 1) % lanes], into: group)))
                }
            }
            for (path, outcome) in outcomes { try report(path, outcome) }
        }
    }

    private func ingestOne(path: String, from messages: MessageReader, into group: any IngestGroup) throws -> Outcome {
        switch messages.next() {
        case .unreadable(let why): return .unreadable(why)
        case .refused(let error): return .refused(error)
        case .items, .end: preconditionFailure("a file's messages arrived before its beginning")
        case .begin(let receivedAt):
            do {
                let stored = try group.ingest(source: (path as NSString).lastPathComponent, receivedAt: receivedAt) { sink in
                    while true {
                        switch messages.next() {
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

    private static func decode(
        path: String, limits: BundleLimits, receivedAt: ReceivedAt, buffer: inout ReadBuffer,
        into queue: MessageBatcher
    ) {
        // POSIX calls rather than FileHandle and FileManager: with bundles of a few kilobytes, their allocations and
        // attribute dictionaries cost a fifth of decoding.
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            queue.push(.unreadable(errno == ENOENT ? "no such file" : "cannot be read (\(String(cString: strerror(errno))))"))
            return
        }
        defer { close(fd) }
        let instant: Int64
        switch receivedAt {
        case .fixed(let ms): instant = ms
        case .now: instant = Int64(Date().timeIntervalSince1970 * 1000)
        case .fileModificationTime: instant = Self.modificationTime(fd) ?? Int64(Date().timeIntervalSince1970 * 1000)
        }
        queue.push(.begin(receivedAt: instant))
        let decoder = BundleDecoder(encoding: .sniff, limits: limits)
        var batch: [BundleItem] = []
        let emit: (BundleItem) -> Void = { item in
            batch.append(item)
            if batch.count == 512 {
                queue.push(.items(batch))
                batch.removeAll(keepingCapacity: true)
            }
        }
        do {
            while !queue.isClosed {
                let count = read(fd, buffer.bytes.baseAddress, buffer.bytes.count)
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else {
                    throw BundleError(.undecodable, "reading failed: \(String(cString: strerror(errno)))")
                }
                if count == 0 { break }
                try decoder.consume(UnsafeRawBufferPointer(rebasing: buffer.bytes[..<count]), emit)
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

    /// The open file's last modification, epoch milliseconds.
    private static func modificationTime(_ fd: Int32) -> Int64? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

/// One decoding thread's read buffer, reused from file to file.
private struct ReadBuffer: ~Copyable {
    let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
    deinit { bytes.deallocate() }
}

/// What the decoding thread tells the storing thread about one file, in order.
private enum Message: Sendable {
    case begin(receivedAt: Int64)
    case items([BundleItem])
    case end
    case refused(BundleError)
    case unreadable(String)
}

/// Gathers messages into batches of about a thousand records before handing them over: most bundles hold a few
/// dozen records, and a hand-over per message cost more in thread wake-ups than decoding them.
private final class MessageBatcher {
    private let queue: BoundedQueue<[Message]>
    private let spent: SpentBatches
    private var batch: [Message] = []
    private var items = 0

    init(queue: BoundedQueue<[Message]>, spent: SpentBatches) {
        self.queue = queue
        self.spent = spent
    }

    var isClosed: Bool { queue.isClosed }

    func push(_ message: Message) {
        batch.append(message)
        if case .items(let list) = message { items += list.count }
        if items >= 1_024 || batch.count >= 256 { flush() }
    }

    /// Hands over what is gathered; called once more after the last file.
    func flush() {
        guard !batch.isEmpty else { return }
        spent.release()
        queue.push(batch)
        batch.removeAll(keepingCapacity: true)
        items = 0
    }
}

/// The storing thread's side: the batches' messages one at a time.
private final class MessageReader {
    private let queue: BoundedQueue<[Message]>
    private let spent: SpentBatches
    private var batch: [Message] = []
    private var index = 0

    init(queue: BoundedQueue<[Message]>, spent: SpentBatches) {
        self.queue = queue
        self.spent = spent
    }

    func next() -> Message {
        while index == batch.count {
            if !batch.isEmpty { spent.hand(&batch) }
            batch = queue.pop()
            index = 0
        }
        defer { index += 1 }
        return batch[index]
    }
}

/// Batches the storing thread is done with, released by the decoding thread that allocated them. Releasing a batch
/// frees a few hundred records' strings, and glibc frees another thread's allocations under that thread's arena
/// lock: on the storing thread, the one that bounds ingest, this was a twentieth of its time.
private final class SpentBatches: @unchecked Sendable {
    private let lock = NSLock()
    private var batches: [[Message]] = []

    /// Takes the storing thread's reference, emptying `batch`, so that the last reference is the decoding thread's.
    func hand(_ batch: inout [Message]) {
        lock.withLock {
            batches.append(batch)
            batch = []
        }
    }

    /// Called by the decoding thread: frees what the storing thread handed back.
    func release() {
        var done: [[Message]] = []
        lock.withLock { swap(&done, &batches) }
        // `done`, the last reference, ends here, on the decoding thread.
    }
}
