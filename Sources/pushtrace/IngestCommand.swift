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

            Device clocks are corrected per bundle (SPEC §5) against the time the file was received, taken by \
            default from its modification time.

            Examples:
              pushtrace ingest bundles/net.rorklab.dailypick/*.ndjson.gz
              pushtrace ingest bundles                  # every bundle file under the folder
              pushtrace ingest --db /var/lib/pushtrace.sqlite --received-at now upload.ndjson.gz

            Exit status: 0 when every file was stored (lines rejected on their own included), 2 when a file was \
            refused or could not be read.
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(help: ArgumentHelp("Bundle files, or folders to take every *.ndjson[.gz] file from (recursively, in name order).",
                                 valueName: "file"))
    var files: [String]

    @Option(help: ArgumentHelp("""
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

    @Flag(help: """
        Print only problems and the totals: the files with rejected lines and the files refused (with --format \
        json, the only files listed).
        """)
    var quiet = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one bundle file") }
        if maxDecompressedMib < 1 { throw ValidationError("--max-decompressed-mib must be at least 1") }
        if maxLineKib < 1 { throw ValidationError("--max-line-kib must be at least 1") }
    }

    func run() throws {
        let received: FileIngestor.ReceivedAt = switch receivedAt {
        case "mtime": .fileModificationTime
        case "now": .now
        default: .fixed(try Instant.parse(receivedAt, option: "--received-at"))
        }
        let store = try Store(path: database.db)
        let limits = BundleLimits(maxDecompressedBytes: maxDecompressedMib << 20, maxLineBytes: maxLineKib << 10)
        let ingestor = FileIngestor(store: store, limits: limits, receivedAt: received)
        var totals = (accepted: 0, rejected: 0, duplicates: 0, refused: 0)
        var documents: [FileReport] = []
        let started = Date()
        let paths = try BundlePaths.expand(files)
        var filesDone = 0
        var lastProgress = started
        try ingestor.ingest(paths: paths) { path, outcome in
            filesDone += 1
            if Date().timeIntervalSince(lastProgress) >= 5 {
                lastProgress = Date()
                printError("stored \(filesDone) of \(paths.count) files (\(totals.accepted) records)")
            }
            switch outcome {
            case .stored(let result):
                if result.duplicate { totals.duplicates += 1 } else {
                    totals.accepted += result.accepted
                    totals.rejected += result.rejected
                }
                guard !quiet || result.rejected > 0 else { return }
                if format == .json { return documents.append(FileReport(path: path, result: result)) }
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
                if format == .json { documents.append(FileReport(file: path, error: error.description)) }
                printError("\(path)\(error.line.map { ":\($0)" } ?? ""): refused, nothing stored: \(error.message)")
            case .unreadable(let why):
                totals.refused += 1
                if format == .json { documents.append(FileReport(file: path, error: why)) }
                printError("\(path): \(why)")
            }
        }
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        let diagnosing = Date()
        var shown = Date.distantPast
        let settled = try store.settleCauses { done, total in
            // As for storing: that it began, then a line every 5 s (a batch takes a tenth of a second when cached).
            guard total >= 20_000, done == 0 || Date().timeIntervalSince(shown) >= 5 else { return }
            shown = Date()
            printError(done == 0 ? "diagnosing \(total) notifications" : "diagnosed \(done) of \(total) notifications")
        }
        let diagnosisSeconds = Date().timeIntervalSince(diagnosing)
        let rate = Int(Double(totals.accepted) / seconds)
        if format == .json {
            let report = IngestReport(files: documents, accepted: totals.accepted, rejected: totals.rejected,
                                      duplicates: totals.duplicates, refused: totals.refused,
                                      notificationsDiagnosed: settled, storeMs: Int64(seconds * 1000),
                                      diagnoseMs: Int64(diagnosisSeconds * 1000))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("\(paths.count) files: \(totals.accepted) records accepted, \(totals.rejected) rejected, "
                  + "\(totals.duplicates) duplicate bundles, \(totals.refused) refused; "
                  + "\(settled) notifications diagnosed (\(rate) records/s stored)")
        }
        if totals.refused > 0 { throw ExitCode(2) }
    }

    static func offset(_ ms: Int64) -> String {
        let sign = ms < 0 ? "-" : "+"
        let value = abs(ms)
        return value >= 60_000 ? "\(sign)\(value / 60_000) min \((value % 60_000) / 1000) s" : "\(sign)\(value / 1000) s"
    }
}

/// `ingest --format json`: the totals and a document per file. Typed rather than `JSONValue`: `JSONEncoder`
/// encodes plain structs several times faster, and a corpus has tens of thousands of files.
private struct IngestReport: Encodable {
    var files: [FileReport]
    var accepted: Int
    var rejected: Int
    var duplicates: Int
    var refused: Int
    var notificationsDiagnosed: Int
    var storeMs: Int64
    var diagnoseMs: Int64

    enum CodingKeys: String, CodingKey {
        case files, accepted, rejected, duplicates, refused
        case notificationsDiagnosed = "notifications_diagnosed", storeMs = "store_ms", diagnoseMs = "diagnose_ms"
    }
}

/// One file of `ingest --format json`: what storing it did, or why nothing of it was stored (`error`).
private struct FileReport: Encodable {
    var file: String
    var appID: String?
    var bundleID: String?
    var accepted: Int?
    var rejected: Int?
    var duplicate: Bool?
    var clockOffsetMs: Int64?
    var rejections: [IngestResult.Rejection]?
    var error: String?

    enum CodingKeys: String, CodingKey {
        case file, accepted, rejected, duplicate, rejections, error
        case appID = "app_id", bundleID = "bundle_id", clockOffsetMs = "clock_offset_ms"
    }

    init(file: String, error: String) {
        self.file = file
        self.error = error
    }

    init(path: String, result: IngestResult) {
        file = path
        appID = result.appID
        bundleID = result.bundleID
        accepted = result.accepted
        rejected = result.rejected
        duplicate = result.duplicate
        clockOffsetMs = result.clockOffsetMs
        rejections = result.rejections
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
                paths.append(argument) // A missing file is reported with the others, in order.
                continue
            }
            let found = try bundleFiles(under: argument)
            if found.isEmpty { throw UsageError("\(argument): no bundle files (*.ndjson, *.ndjson.gz) in this folder") }
            paths += found
        }
        return paths
    }

    /// The bundle files under `folder`, recursively, sorted by their path below it. POSIX calls rather than
    /// `FileManager`'s enumerator, which took half a second for 66,000 files before the first could be stored.
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
                if entry.pointee.d_type == UInt8(DT_UNKNOWN) { // Some file systems do not say: ask.
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
