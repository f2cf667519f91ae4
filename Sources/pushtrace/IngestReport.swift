import Foundation
import PushTraceStore

/// What `ingest` counted: the totals of its text summary line and of its JSON document.
struct IngestTotals: Encodable {
    var accepted = 0
    var rejected = 0
    var duplicates = 0
    var refused = 0
    var notificationsDiagnosed = 0
    var storeMs: Int64 = 0
    var diagnoseMs: Int64 = 0
    /// Why the run stopped before its end (a store failure); nil when it ran through.
    var error: String?

    /// The counts as the text output says them.
    var counts: String {
        "\(accepted) records accepted, \(rejected) rejected, \(duplicates) duplicate bundles, \(refused) refused"
    }

    enum CodingKeys: String, CodingKey {
        case accepted, rejected, duplicates, refused, error
        case notificationsDiagnosed = "notifications_diagnosed", storeMs = "store_ms", diagnoseMs = "diagnose_ms"
    }
}

/// `ingest --format json`: one document, `files` (a report per file) and then the totals, written as the files
/// are committed rather than gathered first, so that its memory does not grow with the number of files (a
/// backfill can name millions).
struct IngestJSONWriter {
    private let encoder = JSONEncoder()
    private var files = 0

    /// Starts the document.
    init() {
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        print("{\n  \"files\" : [", terminator: "")
    }

    /// Writes one file's report, the next element of `files`.
    mutating func file(_ report: FileReport) throws {
        let text = String(decoding: try encoder.encode(report), as: UTF8.self)
        print(files == 0 ? "\n" : ",\n", terminator: "")
        // Nested one level deeper than the encoder writes it. Newlines only separate members: JSON escapes them
        // within strings.
        print(text.split(separator: "\n").map { "    \($0)" }.joined(separator: "\n"), terminator: "")
        files += 1
    }

    /// Ends `files` and the document with the totals' members.
    func finish(_ totals: IngestTotals) throws {
        print(files == 0 ? "]," : "\n  ],")
        // The totals encoded as an object of their own, whose members (after its "{\n") close this one.
        print(String(decoding: try encoder.encode(totals), as: UTF8.self).dropFirst(2))
    }
}

/// One file of `ingest --format json`: what storing it did, or why nothing of it was stored (`error`).
struct FileReport: Encodable {
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
