import Foundation
import PushTraceCore

/// `pushtrace copy`: a whole store moved to another engine (or another file), nothing lost (docs/spec.md §9).
///
/// The source reads itself out in one snapshot, a page at a time, as engine-neutral parts (``CopiedPart``); the
/// target, which must hold nothing yet, writes each part as its own schema keeps it. What is copied is what the
/// store holds, not what it was fed: compressed record blocks as they are (with the dictionaries they name),
/// rejected lines, config bodies, pruned bundles (so that a re-upload is still answered `duplicate`), summaries,
/// tokens (their hashes) and rollups (which outlive the records retention deletes). Nothing is derived again but
/// the notification→block index, whose keys are computed from each block's lines as ingest computes them.
public enum StoreCopy {
    /// The tables whose rows are the same, column for column, in every engine: copied as rows.
    public static let tables: [CopiedTable] = [
        CopiedTable("config", ["app_id", "device_id", "process", "ts", "device_ts", "body_ref", "settings"]),
        CopiedTable(
            "device",
            [
                "app_id", "device_id", "first_seen", "last_seen", "app_version", "os", "device_model", "settings", "settings_since",
                "previous_settings", "previous_since",
            ]),
        CopiedTable(
            "notification",
            [
                "app_id", "notification_id", "device_id", "category", "app_version", "os", "first_ts", "last_ts", "sent_ts",
                "apns_status", "has_alert", "mutable_content", "service_received", "service_delivered", "service_expired",
                "service_ms", "service_crashed", "content_received", "content_crashed", "actions", "app_responses", "records",
                "device_reached", "downloads", "download_bytes", "attachment_failure", "cause", "action_list", "cause_flags",
            ]),
        CopiedTable("token", ["id", "app_id", "scope", "secret_sha256", "label", "created_at", "revoked_at"]),
        CopiedTable(
            "daily",
            [
                "app_id", "day", "category", "app_version", "os", "cause", "attachment_failure", "notifications", "sent",
                "apns_accepted", "device_reached", "service_ran", "service_delivered", "service_timeouts", "service_crashed",
                "content_crashed", "expanded", "acted", "downloads", "download_bytes", "attachment_failed", "size_under_100k",
                "size_under_1m", "size_under_10m", "size_over_10m", "example_id",
            ]),
        CopiedTable(
            "hourly",
            [
                "app_id", "hour", "category", "cause", "notifications", "service_ran", "service_timeouts", "extension_runs",
                "extension_crashes", "attachment_tries", "attachment_failures",
            ]),
        CopiedTable(
            "minutely",
            [
                "minute", "app_id", "category", "notifications", "service_ran", "service_timeouts", "extension_runs",
                "extension_crashes", "attachment_tries", "attachment_failures",
            ]),
        CopiedTable("daily_duration", ["app_id", "day", "ms", "n"]),
        CopiedTable("daily_action", ["app_id", "day", "action", "response", "n"]),
    ]

    /// The tables a copy counts on both sides when it is done: every table of the data model but the index, which is
    /// computed again from the blocks (a source's check may find it holding less).
    public static let countedTables =
        ["bundle", "record_block", "rejected_line", "dictionary", "config_body"]
        + tables.map(\.name)

    /// How many bundles one read of a copy takes, and how many rows of a table one part holds.
    static let bundlesPerPage = 64
    static let rowsPerPage = 1_000

    /// The most bytes of blocks one page of bundles holds (a page ends early when its bundles' blocks reach it):
    /// a backend's bundle of a day's `push.sent` lines holds thousands of blocks.
    public static let bytesPerPage = 32 << 20

    /// Copies every part `source` reads out into `target` (which must hold nothing), then compares each table's
    /// count in the target with the source's, counted in the source's snapshot: fails unless every count is the
    /// same. `progress` is told after each part.
    ///
    /// The source reads on a thread of its own, at most ``partsAhead`` parts ahead of the target: reading a page
    /// (and decoding its blocks for their index keys) overlaps writing the page before it.
    public static func run(
        from source: any TraceStore, to target: any TraceStore,
        progress: ((CopyTally) -> Void)? = nil
    ) throws -> CopyTally {
        let writer: any StoreCopyTarget
        do {
            writer = try target.makeCopyTarget()
        } catch let error as StoreError where error.code.isCopy {
            throw error
        } catch {
            throw StoreError.copyCannotStart(target.location, "\(target.explaining(error))")
        }
        let parts = BoundedQueue<ReadPart>(capacity: partsAhead)
        let reader = parts.startProducer(named: "pt-copy-reader", stackSize: 8 << 20) {
            do {
                try source.copyOut { part in
                    // The target failed and stopped taking parts: stop reading.
                    if parts.isClosed { throw CancellationError() }
                    parts.push(.part(part))
                }
                parts.push(.end)
            } catch {
                parts.push(.failed(error))
            }
        }
        defer { reader.stop() }
        var tally = CopyTally()
        var sourceCounts: [String: Int64] = [:]
        let finished: CopyFinish
        do {
            finished = try writer.copy { write in
                while true {
                    switch parts.pop() {
                    case .part(.counts(let counts)): sourceCounts = counts
                    case .part(let part):
                        try write(part)
                        tally.add(part)
                        progress?(tally)
                    case .end: return
                    case .failed(let error): throw SourceFailure(error: error)
                    }
                }
            }
        } catch let failure as SourceFailure {
            if let error = failure.error as? StoreError, error.code.isCopy { throw error }
            throw StoreError.copyFailed(writing: false, source.location, "\(source.explaining(failure.error))")
        } catch let error as StoreError where error.code.isCopy {
            throw error
        } catch {
            throw StoreError.copyFailed(writing: true, target.location, "\(target.explaining(error))")
        }
        for table in countedTables {
            let copied = sourceCounts[table] ?? -1, stored = finished.counts[table] ?? -1
            guard copied == stored else { throw StoreError.copyCountsDiffer(table: table, source: copied, target: stored) }
            tally.rows[table] = stored
        }
        return tally
    }

    /// How many parts the source may read ahead of the target (a page of bundles holds up to ``bytesPerPage`` of
    /// blocks).
    static let partsAhead = 2

    /// What the source's thread hands the target's.
    private enum ReadPart: Sendable {
        case part(CopiedPart)
        case end
        case failed(any Error)
    }

    /// An error of the source's, told apart from the target's on its way out of the target's writing.
    private struct SourceFailure: Error {
        var error: any Error
    }
}

/// What a target says when a copy is done: each counted table's rows.
public struct CopyFinish: Sendable {
    public var counts: [String: Int64]

    package init(counts: [String: Int64]) {
        self.counts = counts
    }
}

/// A table copied row by row, and the columns copied (every column it has in every engine).
public struct CopiedTable: Sendable, Equatable {
    public var name: String
    public var columns: [String]

    public init(_ name: String, _ columns: [String]) {
        self.name = name
        self.columns = columns
    }
}

/// One page of what a store holds, in the order a copy writes them: dictionaries and config bodies first (blocks
/// and config rows name them by id), then bundles, then the row tables.
public enum CopiedPart: Sendable {
    /// How many bundles the source holds (said once, first).
    case bundleCount(Int)
    /// Each of ``StoreCopy/countedTables``' rows in the source's snapshot (said once, last).
    case counts([String: Int64])
    case dictionaries([CopiedDictionary])
    case configBodies([CopiedConfigBody])
    case bundles([CopiedBundle])
    case rows(CopiedTable, [[QueryValue]])
}

/// A dictionary record blocks were compressed against; its id is kept (blocks name it).
public struct CopiedDictionary: Sendable, Equatable {
    public var id: Int64
    public var appID: String?
    public var adler32: Int64
    public var trainedAt: Int64
    public var bytes: [UInt8]

    package init(id: Int64, appID: String?, adler32: Int64, trainedAt: Int64, bytes: [UInt8]) {
        (self.id, self.appID, self.adler32, self.trainedAt, self.bytes) = (id, appID, adler32, trainedAt, bytes)
    }
}

/// A config record's body, compressed as stored, with its digest; its id is kept (config rows name it).
public struct CopiedConfigBody: Sendable, Equatable {
    public var id: Int64
    public var digest: Int64
    public var appGroup: String?
    public var body: [UInt8]

    package init(id: Int64, digest: Int64, appGroup: String?, body: [UInt8]) {
        (self.id, self.digest, self.appGroup, self.body) = (id, digest, appGroup, body)
    }
}

/// One stored bundle: what its manifest said, when and from where it came, its counts, and its blocks and rejected
/// lines (none when retention pruned it: then only the bundle's row is kept, for idempotency).
public struct CopiedBundle: Sendable, Equatable {
    public var appID: String
    public var bundleID: String
    public var deviceID: String?
    public var appVersion: String?
    public var build: String?
    public var os: String?
    public var deviceModel: String?
    public var sdk: String?
    public var uploadedAt: Int64?
    public var receivedAt: Int64
    public var clockOffsetMs: Int64
    public var source: String?
    public var accepted: Int64
    public var rejected: Int64
    public var prunedAt: Int64?
    /// ``BundleTimeSpan``: the hours its lines span (nil: unknown).
    public var tsFrom: Int64?
    public var tsTo: Int64?
    public var configTsFrom: Int64?
    public var configTsTo: Int64?
    public var blocks: [CopiedBlock] = []
    public var rejectedLines: [CopiedRejectedLine] = []

    package init(appID: String, bundleID: String, receivedAt: Int64, clockOffsetMs: Int64) {
        self.appID = appID
        self.bundleID = bundleID
        self.receivedAt = receivedAt
        self.clockOffsetMs = clockOffsetMs
        accepted = 0
        rejected = 0
    }
}

/// A record block as stored (``RecordBlock``), with the index keys of the notifications its lines name.
public struct CopiedBlock: Sendable, Equatable {
    /// Its id in the source: the order blocks were stored in, which a target keeps where its engine allows.
    public var id: Int64
    public var lines: Int64
    public var rawBytes: Int64
    /// The id of the dictionary it was compressed against (0: none).
    public var dictionary: Int64
    public var data: [UInt8]
    /// ``NotificationBlockKey``s, sorted; none when the block cannot be read back (it is copied as it is).
    public var keys: [Int64]
    /// Whether the source could read the block back (and so index it).
    public var isReadable: Bool

    /// `keys` nil: the block could not be read back.
    package init(id: Int64, lines: Int64, rawBytes: Int64, dictionary: Int64, data: [UInt8], keys: [Int64]?) {
        self.id = id
        (self.lines, self.rawBytes, self.dictionary, self.data) = (lines, rawBytes, dictionary, data)
        self.keys = keys ?? []
        isReadable = keys != nil
    }

    /// The index keys of `row`'s lines, as ingest computes them; nil when the block cannot be read back.
    package static func keys(of row: StoredBlockRow, reader: StoredLineReader) -> [Int64]? {
        var keys: Set<Int64> = []
        do {
            for var text in try reader.decode(row) {
                let record = try StoredRecord.readRecord(storedBody: &text)
                if let id = record.notificationID.map(NotificationKey.normalize) {
                    keys.insert(NotificationBlockKey.of(appID: row.appID, notificationID: id))
                }
            }
        } catch {
            return nil
        }
        return keys.sorted()
    }
}

/// A line a bundle held that was not accepted: where, why, and its bytes as received.
public struct CopiedRejectedLine: Sendable, Equatable {
    public var line: Int64
    public var reason: String
    public var raw: [UInt8]

    package init(line: Int64, reason: String, raw: [UInt8]) {
        (self.line, self.reason, self.raw) = (line, reason, raw)
    }
}

/// What a copy wrote, counted as it went; after it, every table's row count in the target.
public struct CopyTally: Sendable {
    /// How many bundles the source holds.
    public var bundlesInSource = 0
    public var bundles = 0
    public var blocks = 0
    /// Blocks that could not be read back for their index keys (copied as they are; `pushtrace check` names them).
    public var unreadableBlocks = 0
    /// Rows copied so far, and the table they are of.
    public var rowsCopied = 0
    public var table: String?
    /// Rows per table, once the copy is done.
    public var rows: [String: Int64] = [:]

    mutating func add(_ part: CopiedPart) {
        switch part {
        case .bundleCount(let count): bundlesInSource = count
        case .bundles(let page):
            bundles += page.count
            for bundle in page {
                blocks += bundle.blocks.count
                unreadableBlocks += bundle.blocks.filter { !$0.isReadable }.count
            }
        case .rows(let table, let page):
            rowsCopied += page.count
            self.table = table.name
        case .dictionaries, .configBodies, .counts: break
        }
    }
}

/// The target's end of a copy: it writes each part as its engine keeps it.
public protocol StoreCopyTarget: AnyObject {
    /// Calls `parts`, which hands each part of the copy to the function it is given, and writes those parts; then
    /// ends the copy (an engine's id counters are moved past the ids copied) and counts what it stored.
    func copy(_ parts: (_ write: (CopiedPart) throws -> Void) throws -> Void) throws -> CopyFinish
}
