import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceRecords
import PushTraceStore

struct Ingest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store bundle files (gzip or plain NDJSON) exactly as the server would.",
        discussion: """
            Each file is one bundle, stored all-or-nothing: a file that cannot be decoded as a whole (truncated \
            gzip, no manifest, over the size limit) changes nothing; a bad line is rejected on its own, kept with \
            its reason, and the rest is stored. A bundle already stored (same app_id and bundle_id) is reported as \
            a duplicate and stored nothing twice.

            Device clocks are corrected per bundle (docs/protocol.md#clocks) against the time the file was received, taken by \
            default from its modification time.

            Examples:
              pushtrace ingest bundles/net.rorklab.dailypick/*.ndjson.gz
              pushtrace ingest bundles                  # every bundle file under the folder
              pushtrace ingest --db /var/lib/pushtrace.sqlite --received-at now upload.ndjson.gz

            Exit status: 0 when every file was stored (lines rejected on their own included), 2 when a file was \
            refused or could not be read.
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(
        help: ArgumentHelp(
            "Bundle files, or folders to take every *.ndjson[.gz] file from (recursively, in name order).",
            valueName: "file"))
    var files: [String]

    @Option(
        help: ArgumentHelp(
            """
            When the files were received: 'mtime' (each file's modification time), 'now', or an instant \
            (2026-11-10T08:30:00Z or epoch ms).
            """, valueName: "when"))
    var receivedAt = "mtime"

    @Option(help: ArgumentHelp("Refuse a bundle that decompresses to more than this many MiB.", valueName: "MiB"))
    var maxDecompressedMib = 64

    @Option(help: ArgumentHelp("Reject a line longer than this many KiB.", valueName: "KiB"))
    var maxLineKib = 1024

    @Option(help: "text: a line per file; json: one document.")
    var format: OutputFormat = .text

    @Flag(
        help: """
            Print only problems and the totals: the files with rejected lines and the files refused (with --format \
            json, the only files listed).
            """)
    var quiet = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one bundle file") }
        if maxDecompressedMib < 1 { throw ValidationError("--max-decompressed-mib must be at least 1") }
        if !(1...1 << 20).contains(maxLineKib) { throw ValidationError("--max-line-kib must be 1 to 1048576 (1 KiB to 1 GiB)") }
    }

    func run() throws {
        let received: FileIngestor.ReceivedAt =
            switch receivedAt {
            case "mtime": .fileModificationTime
            case "now": .now
            default: .fixed(try Instant.parse(receivedAt, option: "--received-at"))
            }
        let store = try database.openStore()
        defer { database.close(store) }
        let limits = BundleLimits(maxDecompressedBytes: maxDecompressedMib << 20, maxLineBytes: maxLineKib << 10)
        let ingestor = FileIngestor(store: store, limits: limits, receivedAt: received)
        var totals = IngestTotals()
        let paths = try BundlePaths.expand(files)
        var json = format == .json ? IngestJSONWriter() : nil
        let started = Date()
        var filesDone = 0  // committed or refused
        do {
            var lastProgress = started
            try ingestor.ingest(paths: paths) { path, outcome in
                filesDone += 1
                if Date().timeIntervalSince(lastProgress) >= 5 {
                    lastProgress = Date()
                    printError("stored \(filesDone) of \(paths.count) files (\(totals.accepted) records)")
                }
                try report(path, outcome, totals: &totals, json: &json)
            }
            totals.storeMs = Int64(Date().timeIntervalSince(started) * 1000)
            let diagnosing = Date()
            var shown = Date.distantPast
            totals.notificationsDiagnosed = try store.settleCauses { done, total in
                // As for storing: that it began, then a line every 5 s, however short each batch.
                guard total >= 20_000, done == 0 || Date().timeIntervalSince(shown) >= 5 else { return }
                shown = Date()
                printError(done == 0 ? "diagnosing \(total) notifications" : "diagnosed \(done) of \(total) notifications")
            }
            totals.diagnoseMs = Int64(Date().timeIntervalSince(diagnosing) * 1000)
        } catch {
            let stopped = store.explaining(error)
            // The document stays whole: what was committed, and why the run stopped.
            if totals.storeMs == 0 { totals.storeMs = Int64(Date().timeIntervalSince(started) * 1000) }
            totals.error = "\(stopped)"
            try json?.finish(totals)
            if json == nil {
                print(
                    "stopped after \(filesDone) of \(paths.count) files: \(totals.counts); those stay stored, the other "
                        + "files were not")
            }
            throw stopped
        }
        if let json {
            try json.finish(totals)
        } else {
            let rate = Int(Double(totals.accepted) / max(Double(totals.storeMs) / 1000, 0.001))
            print(
                "\(paths.count) files: \(totals.counts); \(totals.notificationsDiagnosed) notifications diagnosed "
                    + "(\(rate) records/s stored)")
        }
        if totals.refused > 0 { throw ExitCode(2) }
    }

    /// Counts one file's outcome and shows it: problems always (on stderr when nothing was stored), the rest unless
    /// `--quiet`.
    private func report(
        _ path: String, _ outcome: FileIngestor.Outcome, totals: inout IngestTotals,
        json: inout IngestJSONWriter?
    ) throws {
        switch outcome {
        case .stored(let result):
            if result.duplicate {
                totals.duplicates += 1
            } else {
                totals.accepted += result.accepted
                totals.rejected += result.rejected
            }
            guard !quiet || result.rejected > 0 else { return }
            if json != nil {
                try json?.file(FileReport(path: path, result: result))
                return
            }
            var line = "\(path): accepted \(result.accepted), rejected \(result.rejected)"
            if result.duplicate { line += ", duplicate (already stored; nothing stored again)" }
            if result.clockOffsetMs != 0 { line += ", device clock corrected by \(Self.offset(result.clockOffsetMs))" }
            print(line)
            for rejection in result.rejections { print("  \(path):\(rejection.line): rejected: \(rejection.reason)") }
            if result.rejected > result.rejections.count {
                print("  … and \(result.rejected - result.rejections.count) more rejected lines (see the rejected_line table)")
            }
        case .refused(let error):
            totals.refused += 1
            try json?.file(FileReport(file: path, error: error.description))
            printError("\(path)\(error.line.map { ":\($0)" } ?? ""): refused, nothing stored: \(error.message)")
        case .unreadable(let why):
            totals.refused += 1
            try json?.file(FileReport(file: path, error: why))
            printError("\(path): \(why)")
        }
    }

    static func offset(_ ms: Int64) -> String {
        let sign = ms < 0 ? "-" : "+"
        let value = abs(ms)
        return value >= 60_000 ? "\(sign)\(value / 60_000) min \((value % 60_000) / 1000) s" : "\(sign)\(value / 1000) s"
    }
}

/// Command-line paths to bundle files: files as given, folders expanded to the bundle files under them.
enum BundlePaths {
    static let suffixes = [".ndjson", ".ndjson.gz", ".jsonl", ".jsonl.gz", ".gz"]

    static func expand(_ arguments: [String]) throws -> [String] {
        var paths: [String] = []
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory), isDirectory.boolValue else {
                paths.append(argument)  // A missing file is reported with the others, in order.
                continue
            }
            let found = try bundleFiles(under: argument)
            if found.isEmpty { throw UsageError("\(argument): no bundle files (*.ndjson, *.ndjson.gz) in this folder") }
            paths += found
        }
        return paths
    }

    /// The bundle files under `folder`, recursively, sorted by their path below it. POSIX calls rather than
    /// `FileManager`'s enumerator, which is slow enough on a large folder to delay the first bundle stored.
    private static func bundleFiles(under folder: String) throws -> [String] {
        var found: [String] = []
        var folders = [""]
        while let relative = folders.popLast() {
            let path = relative.isEmpty ? folder : "\(folder)/\(relative)"
            guard let directory = opendir(path) else {
                throw UsageError("\(path): cannot list this folder (\(String(cString: strerror(errno))))")
            }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name == "." || name == ".." { continue }
                let child = relative.isEmpty ? name : "\(relative)/\(name)"
                var isFolder = entry.pointee.d_type == UInt8(DT_DIR)
                if entry.pointee.d_type == UInt8(DT_UNKNOWN) {  // Some file systems do not say: ask.
                    var info = stat()
                    isFolder = lstat("\(folder)/\(child)", &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
                }
                if isFolder {
                    folders.append(child)
                } else if suffixes.contains(where: name.hasSuffix) {
                    found.append(child)
                }
            }
        }
        return found.sorted().map { "\(folder.hasSuffix("/") ? String(folder.dropLast()) : folder)/\($0)" }
    }
}
