import Foundation
import NIOCore
import NIOHTTP1
import PushTraceGzip

/// One file's upload: its final answer, how long it took, and how often it was asked to retry.
struct Upload: Sendable {
    /// The final HTTP status, or 0 when the server could not be reached.
    var status: Int
    var latency: Duration
    var retries: Int
    var accepted: Int
    var duplicate: Bool
    var error: String?

    /// Uploads `contents`, the file at `path` as read before (nil when it could not be read), over `connection`.
    static func send(
        _ path: String, contents: BundleFileContents?, round: Int = 0, over connection: inout UploadConnection,
        token: String?, replay: Bool, log: AckLog?
    ) async -> Upload {
        let started = ContinuousClock.now
        guard var file = contents else {
            return Upload(status: 0, latency: .zero, retries: 0, accepted: 0, duplicate: false, error: "cannot read \(path)")
        }
        if round > 0 {
            guard let renamed = renamed(Data(file.bytes.readableBytesView), round: round) else {
                return Upload(status: 0, latency: .zero, retries: 0, accepted: 0, duplicate: false, error: "cannot rename \(path)")
            }
            file.bytes = ByteBuffer(bytes: renamed)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-ndjson")
        headers.add(name: "Content-Encoding", value: file.bytes.readableBytesView.first == 0x1f ? "gzip" : "identity")
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        if replay { headers.add(name: "Pushtrace-Received-At", value: String(file.modified)) }
        var retries = 0
        while true {
            do {
                let answer = try await connection.post("/v1/bundles", headers: headers, body: file.bytes)
                let status = Int(answer.head.status.code)
                if status == 429 || status == 503, retries < 50 {
                    retries += 1
                    let seconds = answer.head.headers.first(name: "Retry-After").flatMap(Double.init) ?? 1
                    // Jitter spreads the retries of clients refused at the same moment.
                    try await Task.sleep(for: .milliseconds(Int(seconds * 1000 * Double.random(in: 0.5...1.5))))
                    continue
                }
                let json = (try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView))) as? [String: Any]
                let accepted = json?["accepted"] as? Int ?? 0
                let duplicate = json?["duplicate"] as? Bool ?? false
                if status == 200, let log {
                    log.append("\(json?["app_id"] as? String ?? "?") \(json?["bundle_id"] as? String ?? "?") \(accepted) \(duplicate)")
                }
                return Upload(
                    status: status, latency: ContinuousClock.now - started, retries: retries, accepted: accepted,
                    duplicate: duplicate, error: status == 200 ? nil : String(buffer: answer.body))
            } catch {
                return Upload(
                    status: 0, latency: ContinuousClock.now - started, retries: retries, accepted: 0, duplicate: false,
                    error: "\(error)")
            }
        }
    }
}

extension Upload {
    /// The bundle with `rN-` put in front of its manifest's `bundle_id`: the same records, a new upload.
    static func renamed(_ data: Data, round: Int) -> Data? {
        let gzip = data.first == 0x1f
        var text: [UInt8] = []
        if gzip {
            guard let inflater = try? Inflater(format: .gzip) else { return nil }
            do {
                try data.withUnsafeBytes { try inflater.consume($0) { text.append(contentsOf: $0) } }
                try inflater.finish()
            } catch { return nil }
        } else {
            text = Array(data)
        }
        let key = Array(#""bundle_id":""#.utf8)
        let firstLine = text.firstIndex(of: UInt8(ascii: "\n")) ?? text.endIndex
        guard let at = text[..<firstLine].firstRange(of: key) else { return nil }
        text.insert(contentsOf: Array("r\(round)-".utf8), at: at.upperBound)
        return gzip ? Data(Deflater.gzip(text, level: 1)) : Data(text)
    }
}

/// Every `*.ndjson` and `*.ndjson.gz` file under the paths, in name order.
enum BundleFiles {
    static func expand(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let enumerator = FileManager.default.enumerator(atPath: path)
            while let name = enumerator?.nextObject() as? String {
                if name.hasSuffix(".ndjson") || name.hasSuffix(".ndjson.gz") { files.append(path + "/" + name) }
            }
        }
        return files.sorted()
    }

    /// `files` in the order a server received them: by modification time (an archived upload's arrival), then path.
    ///
    /// Replaying in path order would send each device's whole history before the next device's, an order no server
    /// meets, which scatters the writes to the store's time-ordered indexes.
    static func inArrivalOrder(_ files: [String]) -> [String] {
        files.map { (path: $0, modified: BundleFileContents.modified(path: $0) ?? 0) }
            .sorted { ($0.modified, $0.path) < ($1.modified, $1.path) }
            .map(\.path)
    }
}

/// What a run measured.
struct Summary {
    var uploads: [Upload]
    var elapsed: Duration
    var concurrency: Int

    init(_ uploads: [Upload], elapsed: Duration, concurrency: Int) {
        self.uploads = uploads
        self.elapsed = elapsed
        self.concurrency = concurrency
    }

    private var seconds: Double { Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18 }
    private var statuses: [Int: Int] { uploads.reduce(into: [:]) { $0[$1.status, default: 0] += 1 } }
    private var records: Int { uploads.reduce(0) { $0 + $1.accepted } }

    private func percentile(_ p: Double) -> Double {
        let sorted = uploads.filter { $0.status == 200 }.map {
            Double($0.latency.components.seconds) * 1000 + Double($0.latency.components.attoseconds) / 1e15
        }.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
    }

    var text: String {
        let statusText = statuses.keys.sorted().map { "\($0 == 0 ? "unreachable" : String($0)): \(statuses[$0]!)" }
            .joined(separator: ", ")
        let firstError = uploads.first { $0.error != nil && $0.status != 200 }?.error ?? "-"
        return """
            uploads: \(uploads.count) with \(concurrency) concurrent uploaders in \(String(format: "%.2f", seconds)) s
            answers: \(statusText); retried after 429/503: \(uploads.reduce(0) { $0 + $1.retries })
            throughput: \(String(format: "%.0f", Double(uploads.count) / seconds)) bundles/s, \
            \(String(format: "%.0f", Double(records) / seconds)) records/s (\(records) records accepted)
            latency (200s): p50 \(String(format: "%.1f", percentile(0.5))) ms, p99 \(String(format: "%.1f", percentile(0.99))) ms
            first error: \(firstError.prefix(200))
            """
    }

    var json: String {
        let object: [String: Any] = [
            "uploads": uploads.count, "concurrency": concurrency, "seconds": seconds, "records": records,
            "statuses": Dictionary(uniqueKeysWithValues: statuses.map { (String($0.key), $0.value) }),
            "retries": uploads.reduce(0) { $0 + $1.retries },
            "bundles_per_second": Double(uploads.count) / seconds, "records_per_second": Double(records) / seconds,
            "p50_ms": percentile(0.5), "p99_ms": percentile(0.99),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
