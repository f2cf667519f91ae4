import Foundation
import PushTraceRecords

/// Records what one process (the app, its service extension or its content extension) does with each notification,
/// as NDJSON lines in the App Group container (docs/protocol.md#bundles, #events, #config-records).
///
/// Use one per process: ``PushTrace/configure(appGroup:server:token:appID:)`` makes it (``PushTrace/recorder``), and
/// ``shared(_:appGroup:limits:)`` gives every caller in a process the same recorder, however many
/// `NotificationService` or view-controller instances iOS creates and however many notifications they handle at once.
///
/// Every disk step (finding the container, creating its folders, opening files, the clean-up at start, each line's
/// `write(2)`) runs on the agent's own serial queue, in the order the calls were made. **On the main thread a
/// recording call never waits for disk**: it encodes its line and hands it to that queue. On any other thread it
/// returns once its line is written, so that an extension iOS kills a moment later has lost nothing it recorded; and
/// before the service extension's content handler or the content extension's completion runs, the lines recorded
/// so far are written (``waitUntilWritten(timeout:)``). Recording never throws: a line that cannot be written (disk
/// full, the container still locked before the first unlock, a wrong App Group) is counted, and the count is written
/// as a `log` record with `dropped_records` as soon as writing works again.
///
/// At its start a recorder seals the files that ended launches left, and reports each notification such a launch
/// was in the middle of as a `service.abnormal_exit` or `content.abnormal_exit` (killed for memory, crashed).
/// Launches still alive, in this process or another, are left alone.
public final class Recorder: @unchecked Sendable {
    /// The process this recorder writes for.
    public let process: ProcessKind
    /// Where it writes, found on the agent's queue the first time it is needed.
    private var place: ContainerPlace
    let limits: RecorderLimits
    let clock: @Sendable () -> Int64
    /// This launch's name (``Launch``): its files are `records/<launch>-<sequence>.ndjson`.
    let launch: String
    /// Guards the service extension's own upload; everything that touches disk is confined to ``disk`` instead.
    private let lock = NSLock()
    private var file: AppendOnlyFile?
    private var sequence = 0
    /// Wall-clock time of the last write (the monotonic clock stops while the phone sleeps; file ages do not).
    private var lastWrite: Int64 = 0
    /// Lines that could not be written and are not yet reported, with the last reason.
    private var unwritten = 0
    private var unwrittenReason = ""
    /// The notifications this launch is in the middle of, in the order they began, and their marker file.
    private var inFlight: [String: InFlightMarker.Entry] = [:]
    private var inFlightOrder: [String] = []
    private var marker: RewrittenFile?
    /// The service extension's own upload, when enabled: its configuration, and its uploader once made (at the
    /// first upload, off the main thread: making it needs the container).
    private var ownUpload: (configuration: UploaderConfiguration, uploader: Uploader?)?
    private var ownUploadLimits = (seconds: 3.0, bytes: Int64(256 << 10))

    /// The one serial queue on which every recorder of this process touches disk, in the order the calls were made.
    static let disk = DispatchQueue(label: "pushtrace.disk", qos: .utility)

    /// The current time in Unix epoch milliseconds.
    public static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    // MARK: One per process

    #if canImport(Darwin)
        /// The recorder of this process for `process`, writing into App Group `appGroup`: created on first use, then the
        /// same one for every caller.
        ///
        /// Throws (and logs with `os_log`) ``AgentError/appGroupUnavailable(_:)`` when this target has no container for
        /// `appGroup`, and ``AgentError/containerUnusable(_:reason:)`` when its folder cannot be used.
        public static func shared(_ process: ProcessKind, appGroup: String, limits: RecorderLimits = RecorderLimits()) throws -> Recorder {
            let recorder = try SharedRecorders.recorder(process, appGroup) {
                Recorder(process: process, place: .ready(try AgentContainer(appGroup: appGroup)), limits: limits)
            }
            recorder.onDisk { _ = recorder.startIfNeeded() }  // as below
            return recorder
        }
    #endif

    /// The recorder of this process for `process` in `container` (Linux, tests, a Mac tool): created on first use,
    /// then the same one for every caller.
    public static func shared(
        _ process: ProcessKind, container: AgentContainer, limits: RecorderLimits = RecorderLimits()
    ) throws -> Recorder {
        let recorder = SharedRecorders.recorder(process, container.root.path) {
            Recorder(process: process, place: .ready(container), limits: limits)
        }
        // Started before it returns, off the main thread, as a recorder made by `init` is; outside the lock above.
        recorder.onDisk { _ = recorder.startIfNeeded() }
        return recorder
    }

    /// Starts a recorder of its own for `process` in `container`. Prefer ``shared(_:container:limits:)``: two
    /// recorders in one process are two launches, each with its own files. It does not throw for a record file
    /// that cannot be opened yet (the container locked before the first unlock): those records are counted.
    ///
    /// - Parameter clock: Unix epoch milliseconds; the system clock unless a test sets its own.
    public convenience init(
        process: ProcessKind, container: AgentContainer, limits: RecorderLimits = RecorderLimits(),
        clock: @escaping @Sendable () -> Int64 = Recorder.systemClock
    ) throws {
        self.init(process: process, place: .ready(container), limits: limits, clock: clock)
        // Off the main thread, started before it returns, as a recording call is written before it returns.
        onDisk { [self] in _ = startIfNeeded() }
    }

    /// A recorder whose container is found, and whose start runs, later on the agent's queue: no disk on this
    /// thread, whichever it is (``PushTrace/configure(appGroup:server:token:appID:)``).
    init(
        process: ProcessKind, place: ContainerPlace, limits: RecorderLimits = RecorderLimits(),
        clock: @escaping @Sendable () -> Int64 = Recorder.systemClock
    ) {
        self.process = process
        self.place = place
        self.limits = limits
        self.clock = clock
        launch = Launch.name(process: process, now: clock())
        Launches.register(launch)
        Self.disk.async { [self] in _ = startIfNeeded() }
    }

    /// Runs `work` on the agent's queue: handed over from the main thread, waited for from any other.
    func onDisk(_ work: @escaping @Sendable () -> Void) {
        if Self.isMain { Self.disk.async(execute: work) } else { Self.disk.sync(execute: work) }
    }

    /// Marks the main queue, whose jobs run on the main thread on Apple platforms but may not elsewhere (a process
    /// that called `dispatchMain()` on Linux).
    private static let mainQueue: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// On the main thread, or running a job of the main queue (the main actor's).
    static var isMain: Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueue) == true }

    /// The container, once found; at the first call it also opens this launch's file, seals the files of launches
    /// that ended and reports what they left in flight, and enforces the size bound. On the queue only.
    func startIfNeeded() -> AgentContainer? {
        switch place {
        case .ready(let container) where marker != nil: return container
        case .unusable: return nil
        case .ready, .appGroup, .directory: break
        }
        let container: AgentContainer
        do {
            container = try place.resolve()
        } catch {
            place = .unusable
            return nil
        }
        place = .ready(container)
        marker = RewrittenFile(url: InFlightMarker.url(launch: launch, in: container), clock: clock)
        // The container exists (``AgentContainer`` made sure), so a file that cannot be opened now is the phone not
        // yet unlocked since it started, or a full disk: records are counted until one can be, not refused.
        file = try? AppendOnlyFile(url: container.records.appendingPathComponent("\(launch)-0000.ndjson"))
        for ended in settleEndedLaunches(in: container) { recordAbnormalExits(ended) }
        enforceTotalBound(in: container)
        return container
    }

    /// Where this recorder writes: found (and its folders created) on the agent's queue, which this waits for; nil
    /// when it cannot be used (a wrong App Group, a read-only disk), which was reported.
    public var container: AgentContainer? { Self.disk.sync { startIfNeeded() } }

    /// Waits, at most `timeout` seconds, until every line recorded so far in this process is written; false when
    /// time ran out. The service-extension and content-extension handles call it before handing control back to
    /// iOS, which may end the process at once.
    @discardableResult
    public func waitUntilWritten(timeout: TimeInterval = 1) -> Bool { Self.waitUntilWritten(timeout: timeout) }

    /// ``waitUntilWritten(timeout:)`` for every recorder of this process (they share one queue).
    @discardableResult
    public static func waitUntilWritten(timeout: TimeInterval = 1) -> Bool {
        let done = DispatchSemaphore(value: 0)
        // A waiter of higher priority raises the queue's (a semaphore lends none): the main thread may be waiting.
        Self.disk.async(qos: .userInitiated, flags: .enforceQoS) { done.signal() }
        return done.wait(timeout: .now() + max(0, timeout)) == .success
    }

    // MARK: Writing

    /// Appends one record with the fields in order: `type`, `ts`, `process`, then `fields` (nil values left out).
    public func record(type: RecordType, _ fields: [(String, JSONValue?)]) {
        write(encode(type, fields))
    }

    /// Appends one encoded line, sealing the file first if the line would take it over its bound.
    func write(_ line: [UInt8]) {
        onDisk { [self] in appendLocked(line) }
    }

    /// The record's NDJSON line, newline included.
    func encode(_ type: RecordType, _ fields: [(String, JSONValue?)], as writer: ProcessKind? = nil) -> [UInt8] {
        JSONLine(
            fields: [("type", .string(type.rawValue)), ("ts", .int(clock())), ("process", .string((writer ?? process).rawValue))]
                + fields
        ).bytes + [UInt8(ascii: "\n")]
    }

    /// Appends a line, on the agent's queue: reopens a file another launch sealed or that could not be opened,
    /// reports earlier lines that could not be written, rolls over a full file, then writes.
    func appendLocked(_ line: [UInt8]) {
        guard let container = startIfNeeded() else {
            return drop("the App Group container cannot be used (the reason was logged when the recorder started)")
        }
        let now = clock()
        // After a pause (a suspended app) the file may have been sealed by another launch, which waits far longer
        // than this: check only after a pause, which keeps the check off the path of a busy extension.
        if let current = file, now - lastWrite > 60_000 || now < lastWrite, !current.isStillAtItsPath {
            file = nil
            sequence += 1  // a new name: the sealed one keeps its own
        }
        lastWrite = now
        if file == nil { startFile(in: container) }
        guard let current = file else { return drop("the container's records folder cannot be written") }
        if current.size > 0 && current.size + Int64(line.count) > limits.maxFileBytes {
            rollOver(in: container)
            enforceTotalBound(in: container)
        }
        if unwritten > 0 { reportUnwritten() }
        guard let target = file, line.withUnsafeBytes({ target.append($0) }) else {
            return drop("a write to the container failed (disk full, or the phone not yet unlocked since it started)")
        }
    }

    private func drop(_ reason: String) {
        unwritten += 1
        unwrittenReason = reason
    }

    private func reportUnwritten() {
        let notice = encode(
            .log,
            [
                ("level", "warning"),
                ("message", .string("pushtrace could not write \(unwritten) record\(unwritten == 1 ? "" : "s"): \(unwrittenReason)")),
                ("dropped_records", .int(Int64(unwritten))),
            ])
        if let target = file, notice.withUnsafeBytes({ target.append($0) }) { unwritten = 0 }
    }

    /// Records a lifecycle step (docs/protocol.md#events) of notification `notificationID` with its fields.
    public func event(_ name: EventName, notificationID: String, _ fields: KeyValuePairs<String, JSONValue?> = [:]) {
        record(
            type: .event,
            [("event", .string(name.rawValue)), ("notification_id", .string(notificationID))]
                + fields.map { ($0.key, $0.value) })
    }

    /// Records a free-form log line, about one notification or none.
    public func log(_ message: String, level: LogLevel = .info, notificationID: String? = nil) {
        record(
            type: .log,
            [
                ("level", .string(level.rawValue)), ("message", .string(message)),
                ("notification_id", notificationID.map(JSONValue.string)),
            ])
    }

    /// A log line's severity.
    public enum LogLevel: String, Sendable {
        case debug, info, notice, warning, error
    }

    /// Seals the file this process is writing and starts a new one, so that an upload takes everything recorded so
    /// far as a finished file. The uploader does this for the process it runs in.
    public func seal() {
        Self.disk.sync {
            guard let container = startIfNeeded(), let file, file.size > 0 else { return }
            rollOver(in: container)
        }
    }

    /// The file being written now (for tests and diagnostics; waits for the agent's queue).
    public var currentFile: URL? { Self.disk.sync { file?.url } }

    /// Records that could not be written and are not yet reported in a `dropped_records` line (waits for the
    /// agent's queue).
    public var unwrittenRecords: Int { Self.disk.sync { unwritten } }

    private func startFile(in container: AgentContainer) {
        let name = "\(launch)-" + Self.zeroPadded(Int64(sequence), 4) + ".ndjson"
        file = try? AppendOnlyFile(url: container.records.appendingPathComponent(name))
    }

    private func rollOver(in container: AgentContainer) {
        if let file {
            try? FileManager.default.moveItem(at: file.url, to: container.sealed.appendingPathComponent(file.url.lastPathComponent))
        }
        sequence += 1
        file = nil
        startFile(in: container)
    }

    /// `value` in decimal, zero-padded to `width` digits (file names that sort by time).
    static func zeroPadded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    // MARK: Work in flight

    /// Marks this launch as working on `notificationID`, or refreshes the footprint its entry has.
    func beginWork(on notificationID: String) {
        let footprint = MemoryFootprint.current()
        onDisk { [self] in
            let since = inFlight[notificationID]?.since ?? clock()
            if inFlight[notificationID] == nil { inFlightOrder.append(notificationID) }
            inFlight[notificationID] = InFlightMarker.Entry(
                notificationID: notificationID, footprintBytes: footprint,
                since: since)
            guard startIfNeeded() != nil else { return }
            marker?.rewrite(InFlightMarker.encode(inFlightOrder.compactMap { inFlight[$0] }))
        }
    }

    /// This launch finished its work on `notificationID`.
    func endWork(on notificationID: String) {
        onDisk { [self] in
            guard inFlight.removeValue(forKey: notificationID) != nil else { return }
            inFlightOrder.removeAll { $0 == notificationID }
            marker?.rewrite(InFlightMarker.encode(inFlightOrder.compactMap { inFlight[$0] }))
        }
    }

    /// Whether ``uploadsAfterDelivery(_:within:maxBytes:)`` is on.
    public var uploadsOwnRecords: Bool { lock.withLock { ownUpload != nil } }

    /// The notifications this launch is in the middle of (waits for the agent's queue).
    public var notificationsInFlight: [String] { Self.disk.sync { inFlightOrder } }

    /// Seals the record files of launches that have ended and claims the in-flight markers they left. On the agent's
    /// queue, at start and before each upload.
    func settleEndedLaunches(in container: AgentContainer) -> [InFlightMarker] {
        for name in container.files(in: container.records) {
            guard let owner = Launch.of(fileName: name), owner != launch else { continue }
            let url = container.records.appendingPathComponent(name)
            if Launch.hasEnded(owner, touched: url, staleAfter: limits.idleFileSealAfter) {
                try? FileManager.default.moveItem(at: url, to: container.sealed.appendingPathComponent(name))
            }
        }
        return InFlightMarker.claimEnded(in: container, by: launch, staleAfter: limits.inFlightStaleAfter)
    }

    /// The `*.abnormal_exit` of each notification an ended launch left in flight, written as that launch's process.
    func recordAbnormalExits(_ marker: InFlightMarker) {
        guard marker.process == .service || marker.process == .content else { return }
        let name: EventName = marker.process == .content ? .contentAbnormalExit : .serviceAbnormalExit
        for entry in marker.entries {
            appendLocked(
                encode(
                    .event,
                    [
                        ("event", .string(name.rawValue)), ("notification_id", .string(entry.notificationID)),
                        ("last_footprint_bytes", entry.footprintBytes.map(JSONValue.int)),
                        ("previous_launch", .string(marker.launch)), ("in_flight_since", .int(entry.since)),
                    ], as: marker.process))
        }
    }

    /// Settles ended launches now (the uploader does this before packing).
    func settle() {
        Self.disk.sync {
            guard let container = startIfNeeded() else { return }
            for ended in settleEndedLaunches(in: container) { recordAbnormalExits(ended) }
        }
    }

    // MARK: The service extension's own upload

    /// Lets the service extension send its own records after each notification is delivered, for users who never
    /// open the app: at most `seconds` and `bytes` per notification, always after the content handler was called.
    /// What it cannot send in time stays for the app's ``Uploader``, which sends only what is still unsent. The first
    /// call's configuration stays in force; later calls change only the bounds, and use the same uploader.
    ///
    /// A configuration the uploader refuses (``AgentError/badConfiguration(_:)``) is reported (the unified log, fault)
    /// and returns false: the extension then records as before, and only its own upload is off. Recording never
    /// depends on uploading.
    @discardableResult
    public func uploadsAfterDelivery(
        _ configuration: UploaderConfiguration, within seconds: TimeInterval = 3,
        maxBytes: Int64 = 256 << 10
    ) -> Bool {
        // Called again (each notification's setup, say), it keeps the configuration it has.
        do {
            try configuration.validate()
        } catch {
            _ = ((error as? AgentError) ?? AgentError.badConfiguration("\(error)")).reported()
            return false
        }
        lock.withLock {
            if ownUpload == nil { ownUpload = (configuration, nil) }
            ownUploadLimits = (max(0.1, min(seconds, 10)), max(4096, maxBytes))
        }
        return true
    }

    /// Sends this launch's records now, within the bounds ``uploadsAfterDelivery(_:within:maxBytes:)`` set; nil when
    /// that was not called. The service-extension handle calls it after delivering.
    @discardableResult
    public func uploadOwnRecords() async -> UploadReport? {
        guard let (configuration, made) = lock.withLock({ ownUpload }) else { return nil }
        let uploader: Uploader
        if let made {
            uploader = made
        } else {
            guard let container, let new = try? Uploader(configuration: configuration, container: container, recorder: self) else {
                return UploadReport(lastError: "the App Group container cannot be used")
            }
            uploader = lock.withLock {
                if let made = ownUpload?.uploader { return made }
                ownUpload?.uploader = new
                return new
            }
        }
        let limits = lock.withLock { ownUploadLimits }
        return await uploader.uploadOwnRecords(within: limits.seconds, maxBytes: limits.bytes)
    }
}

/// The recorder of each process kind and container in this process: one per process is the point, so this is
/// process-wide state, created once and guarded by a lock.
final class SharedRecorders: @unchecked Sendable {
    private static let all = SharedRecorders()
    private let lock = NSLock()
    private var recorders: [String: Recorder] = [:]

    static func recorder(_ process: ProcessKind, _ place: String, make: () throws -> Recorder) rethrows -> Recorder {
        try all.lock.withLock {
            let key = "\(process.rawValue) \(place)"
            if let recorder = all.recorders[key] { return recorder }
            let recorder = try make()
            all.recorders[key] = recorder
            return recorder
        }
    }
}
