import ArgumentParser
import Foundation
import NIOCore

/// Uploads bundle files to a pushtrace server from many concurrent clients, as a fleet of apps would, and reports
/// what came back. Used by `make crash-test` (which bundles were acknowledged) and the HTTP benchmark.
@main
struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushtrace-load",
        abstract: "Upload bundle files to a pushtrace server from many concurrent clients; report latency and throughput.",
        discussion: """
            Each file is uploaded once, in path order (with --replay, in modification-time order), gzip files with Content-Encoding: gzip. A 429 or 503 is retried after its \
            Retry-After, as the agent does; any other answer is final. A server that cannot be reached ends the run. With --acked, every acknowledged bundle is \
            written as a line `app_id bundle_id accepted duplicate` the moment its 200 arrives.

            Examples:
              pushtrace-load --server http://127.0.0.1:8080 --concurrency 64 bench-data
              PUSHTRACE_TOKEN=pt_… pushtrace-load --server http://127.0.0.1:8080 --acked acked.txt --replay bundles
            """)

    @Option(help: ArgumentHelp("The server, http://host:port (plain HTTP).", valueName: "url")) var server: String
    @Option(help: ArgumentHelp("Concurrent uploaders (one connection each).", valueName: "n")) var concurrency = 8
    @Option(help: ArgumentHelp("Append each acknowledged bundle to this file.", valueName: "path")) var acked: String?
    @Flag(
        help: """
            Send each file's modification time as Pushtrace-Received-At, and the files in that order (an admin token \
            replaying archived uploads as they arrived).
            """)
    var replay = false
    @Option(
        help: ArgumentHelp(
            """
            Keep uploading for this many seconds: after the last file, start again from the first with new bundle IDs \
            (round N sends bundle_id "rN-<id>"), so that every upload is new work. Default: each file once.
            """, valueName: "seconds"))
    var duration: Int?
    @Flag(
        help: """
            Read every file into memory before the clock starts, so that the generator's own file reads are not \
            measured (they compete with the server on a shared machine). Needs memory for the whole corpus.
            """)
    var preload = false
    @Option(help: ArgumentHelp("Print the summary as text or json.", valueName: "format")) var format = "text"
    @Argument(help: ArgumentHelp("Bundle files, or folders of *.ndjson[.gz] files.", valueName: "path")) var paths: [String]

    func validate() throws {
        _ = try endpoint()
        if concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        if let duration, duration < 1 { throw ValidationError("--duration must be at least 1 second") }
        if !["text", "json"].contains(format) { throw ValidationError("--format is text or json") }
    }

    /// The server's host and port, from `--server http://host[:port]`.
    private func endpoint() throws -> (host: String, port: Int) {
        guard let url = URL(string: server), url.scheme == "http", let host = url.host, !host.isEmpty else {
            throw ValidationError("--server must be http://host[:port] (plain HTTP), not '\(server)'")
        }
        return (host, url.port ?? 80)
    }

    func run() async throws {
        let named = try BundleFiles.expand(paths)
        let files = replay ? BundleFiles.inArrivalOrder(named) : named
        guard !files.isEmpty else { throw ValidationError("no bundle files under \(paths.joined(separator: ", "))") }
        let token = ProcessInfo.processInfo.environment["PUSHTRACE_TOKEN"]
        let (host, port) = try endpoint()
        let log = try acked.map { try AckLog(path: $0) }
        let next = Counter(until: duration.map { ContinuousClock.now + .seconds($0) })
        let replay = self.replay
        let preloaded = preload ? files.map(BundleFileContents.init(path:)) : nil
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: [Upload].self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var uploads: [Upload] = []
                    guard var index = next.take(below: files.count) else { return uploads }
                    do {
                        try await UploadConnection.with(host: host, port: port) { connection in
                            while true {
                                let path = files[index % files.count]
                                let contents =
                                    if let preloaded { preloaded[index % files.count] } else {
                                        BundleFileContents(path: path)
                                    }
                                let upload = await Upload.send(
                                    path, contents: contents, round: index / files.count,
                                    over: &connection, token: token, replay: replay, log: log)
                                uploads.append(upload)
                                // A server that cannot be reached (killed, in the crash test) ends the run.
                                if upload.status == 0 { next.stop() }
                                guard let following = next.take(below: files.count) else { return }
                                index = following
                            }
                        }
                    } catch {
                        uploads.append(
                            Upload(
                                status: 0, latency: .zero, retries: 0, accepted: 0, duplicate: false,
                                error: "cannot connect to \(host):\(port): \(error)"))
                        next.stop()
                    }
                    return uploads
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        let elapsed = ContinuousClock.now - started
        let summary = Summary(outcomes, elapsed: elapsed, concurrency: concurrency)
        print(format == "json" ? summary.json : summary.text)
    }
}

/// Hands out upload indexes to the uploaders, until the files run out (or, with a deadline, until it passes) or
/// the run is stopped. With a deadline, index `i` is file `i % count` in round `i / count`.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    private var stopped = false
    private let deadline: ContinuousClock.Instant?

    init(until deadline: ContinuousClock.Instant?) { self.deadline = deadline }

    func take(below limit: Int) -> Int? {
        lock.withLock {
            guard !stopped else { return nil }
            if let deadline {
                guard ContinuousClock.now < deadline else { return nil }
            } else {
                guard value < limit else { return nil }
            }
            defer { value += 1 }
            return value
        }
    }

    func stop() { lock.withLock { stopped = true } }
}

/// The acknowledged bundles, one line each, written as the answers arrive.
final class AckLog: @unchecked Sendable {
    private let lock = NSLock()
    private let handle: FileHandle

    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw ValidationError("cannot write \(path)") }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    func append(_ line: String) {
        lock.withLock { handle.write(Data((line + "\n").utf8)) }
    }
}
