import Foundation
import PushTraceRecords

/// Records what one process (the app, its service extension or its content extension) does with each notification,
/// as NDJSON lines in the App Group container (SPEC §2–§4).
///
/// Create one per process launch, early (`application(_:didFinishLaunchingWithOptions:)`, the extension's `init`),
/// and keep it for the life of the process. Every call appends one line with one `write(2)` and returns; nothing is
/// buffered in memory, so a process that iOS kills a moment later has lost nothing it recorded. Recording never
/// throws: a line that cannot be written (disk full) is dropped rather than disturb the notification.
///
/// At its start a recorder seals the files its process's previous launch left, and reports that launch as a
/// `service.abnormal_exit` or `content.abnormal_exit` if it ended in the middle of a notification (killed for
/// memory, crashed). One process of each kind runs at a time, as iOS runs them.
public final class Recorder: @unchecked Sendable {
    /// The process this recorder writes for.
    public let process: ProcessKind
    /// Where it writes.
    public let container: AgentContainer
    let limits: RecorderLimits
    let clock: @Sendable () -> Int64
    /// `<launch time, 13 digits>-<process>-<pid>`: file names sort by time.
    let launch: String
    private let lock = NSLock()
    private var file: AppendOnlyFile
    /// This launch's in-flight marker.
    let marker: RewrittenFile
    private var sequence = 0

    /// The current time in Unix epoch milliseconds.
    public static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Starts recording for `process` in `container`.
    ///
    /// - Parameter clock: Unix epoch milliseconds; the system clock unless a test sets its own.
    public init(process: ProcessKind, container: AgentContainer, limits: RecorderLimits = RecorderLimits(),
                clock: @escaping @Sendable () -> Int64 = Recorder.systemClock) throws {
        self.process = process
        self.container = container
        self.limits = limits
        self.clock = clock
        let now = clock()
        launch = Self.zeroPadded(now, 13) + "-\(process.rawValue)-\(getpid())"
        // The previous launches of this process have ended: their files are sealed, ready to upload.
        for name in container.files(in: container.records) where name.contains("-\(process.rawValue)-") {
            try? FileManager.default.moveItem(at: container.records.appendingPathComponent(name),
                                              to: container.sealed.appendingPathComponent(name))
        }
        file = try AppendOnlyFile(url: container.records.appendingPathComponent("\(launch)-0000.ndjson"))
        let left = InFlightMarker.left(by: process, in: container, except: launch)
        marker = RewrittenFile(url: InFlightMarker.url(process: process, launch: launch, in: container))
        for marker in left { recordAbnormalExit(marker) }
        lock.withLock { enforceTotalBound() }
    }

    // MARK: Writing

    /// Appends one record with the fields in order: `type`, `ts`, `process`, then `fields` (nil values left out).
    public func record(type: RecordType, _ fields: [(String, JSONValue?)]) {
        write(encode(type, fields))
    }

    /// Appends one encoded line, sealing the file first if the line would take it over its bound.
    func write(_ line: [UInt8]) {
        lock.withLock {
            if file.size > 0 && file.size + Int64(line.count) > limits.maxFileBytes {
                rollOver()
                enforceTotalBound()
            }
            line.withUnsafeBytes { _ = file.append($0) }
        }
    }

    /// The record's NDJSON line, newline included.
    func encode(_ type: RecordType, _ fields: [(String, JSONValue?)]) -> [UInt8] {
        JSONLine(fields: [("type", .string(type.rawValue)), ("ts", .int(clock())), ("process", .string(process.rawValue))]
            + fields).bytes + [UInt8(ascii: "\n")]
    }

    /// Appends a line while holding the lock (for records the bookkeeping itself writes).
    func appendLocked(_ line: [UInt8]) {
        line.withUnsafeBytes { _ = file.append($0) }
    }

    /// Records a lifecycle step (SPEC §3) of notification `notificationID` with its fields.
    public func event(_ name: EventName, notificationID: String, _ fields: KeyValuePairs<String, JSONValue?> = [:]) {
        record(type: .event, [("event", .string(name.rawValue)), ("notification_id", .string(notificationID))]
            + fields.map { ($0.key, $0.value) })
    }

    /// Records a free-form log line, about one notification or none.
    public func log(_ message: String, level: LogLevel = .info, notificationID: String? = nil) {
        record(type: .log, [("level", .string(level.rawValue)), ("message", .string(message)),
                            ("notification_id", notificationID.map(JSONValue.string))])
    }

    /// A log line's severity.
    public enum LogLevel: String, Sendable {
        case debug, info, notice, warning, error
    }

    /// Seals the file this process is writing and starts a new one, so that an upload takes everything recorded so
    /// far as a finished file. The uploader does this for the process it runs in.
    public func seal() {
        lock.withLock { if file.size > 0 { rollOver() } }
    }

    /// The file being written now (for tests and diagnostics).
    public var currentFile: URL { lock.withLock { file.url } }

    /// `value` in decimal, zero-padded to `width` digits (file names that sort by time).
    private static func zeroPadded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private func rollOver() {
        try? FileManager.default.moveItem(at: file.url, to: container.sealed.appendingPathComponent(file.url.lastPathComponent))
        sequence += 1
        let name = "\(launch)-" + Self.zeroPadded(Int64(sequence), 4) + ".ndjson"
        if let next = try? AppendOnlyFile(url: container.records.appendingPathComponent(name)) { file = next }
    }
}
