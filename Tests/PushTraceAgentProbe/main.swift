import Foundation
import PushTraceAgent
import PushTraceRecords

// A stand-in for one of an app's processes, for the agent's tests: it records as the service extension, the content
// extension or the app, in an OS process of its own, into the container directory it is given.
//
//   pushtrace-agent-probe flood   CONTAINER PROCESS COUNT TAG   COUNT log lines tagged TAG, as fast as it can
//   pushtrace-agent-probe crash   CONTAINER PROCESS ID          starts work on notification ID, then SIGKILLs itself
//   pushtrace-agent-probe launch  CONTAINER PROCESS             starts (and reports what the last launch left), exits
//   pushtrace-agent-probe service CONTAINER ID ok|timeout       a service extension run on notification ID
//   pushtrace-agent-probe content CONTAINER ID CATEGORY         the content extension: expanded, image, an action
//   pushtrace-agent-probe bench   CONTAINER COUNT               times COUNT record calls (half of them in service runs);
//                                                               memory before and after
//   pushtrace-agent-probe concurrent CONTAINER COUNT HOLD_MS    COUNT notifications at once in one service extension
//                                                               (the shared recorder), each held HOLD_MS before delivery
//   pushtrace-agent-probe crash-many CONTAINER COUNT            begins COUNT notifications, delivers the first, SIGKILLs
//   pushtrace-agent-probe partial CONTAINER                     records while the file size limit cuts writes short
//   pushtrace-agent-probe extension-upload CONTAINER SERVER TOKEN APP ID SECONDS
//                                                               a service run that uploads its own records after delivery
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("pushtrace-agent-probe: \(message)\n".utf8))
    exit(2)
}
guard arguments.count >= 2 else { fail("usage: pushtrace-agent-probe COMMAND CONTAINER …") }
let container = try AgentContainer(directory: URL(fileURLWithPath: arguments[1]))
func process(_ name: String) -> ProcessKind {
    guard let kind = ProcessKind(rawValue: name) else { fail("unknown process '\(name)'") }
    return kind
}
let appGroup = "group.net.rorklab.dailypick"

switch arguments[0] {
case "flood" where arguments.count == 5:
    let recorder = try Recorder(process: process(arguments[2]), container: container)
    for index in 0..<(Int(arguments[3]) ?? 0) {
        recorder.log("\(arguments[4]) line \(index) " + String(repeating: "x", count: index % 300))
    }
case "crash" where arguments.count == 4:
    let recorder = try Recorder(process: process(arguments[2]), container: container)
    recorder.service.received(arguments[3], category: "DAILY_PICK")
    // On the main thread recording only hands lines to the agent's queue; a process iOS kills mid-work has long
    // had them written, so this one waits for them before it dies.
    Recorder.waitUntilWritten(timeout: 10)
    kill(getpid(), SIGKILL)
case "launch" where arguments.count == 3:
    _ = try Recorder(process: process(arguments[2]), container: container)
case "service" where arguments.count == 4:
    let recorder = try Recorder(process: .service, container: container)
    recorder.config(appGroup: appGroup)
    let id = arguments[2]
    recorder.service.received(id, category: "DAILY_PICK")
    if arguments[3] == "timeout" {
        recorder.service.download(id, urlHost: "cdn.rorklab.net", durationMs: 27_800, error: "timed out")
        recorder.service.expired(id, elapsedMs: 29_950)
    } else {
        recorder.service.download(
            id, urlHost: "cdn.rorklab.net", durationMs: 420, httpStatus: 200, bytes: 182_000,
            mime: "image/jpeg")
        recorder.service.attachment(id, ok: true, uti: "public.jpeg", bytes: 182_000, pixelWidth: 1200, pixelHeight: 800)
        recorder.service.delivered(id, elapsedMs: 640)
    }
case "content" where arguments.count == 4:
    let recorder = try Recorder(process: .content, container: container)
    let plist = ContentExtensionPlist(
        categories: [arguments[3]], initialContentSizeRatio: 0.66,
        defaultContentHidden: true, userInteractionEnabled: true)
    recorder.config(appGroup: appGroup, extensionAttributes: plist, interactiveControls: true)
    let id = arguments[2]
    recorder.content.received(id, category: arguments[3])
    recorder.content.image(id, pixelWidth: 1200, pixelHeight: 800, bytes: 182_000, decodeMs: 35)
    let done = DispatchSemaphore(value: 0)
    let completion = recorder.content.completion(id, action: "SAVE_PICK") { _ in done.signal() }
    if let defaults = RecordedDefaults(suite: appGroup, recorder: recorder) {
        defaults.set(id, forKey: "saved_pick", notificationID: id)
    }
    Thread.sleep(forTimeInterval: 1.2)  // the save shows on the card before the answer
    completion(.doNotDismiss)
    done.wait()
case "concurrent" where arguments.count == 4:
    let recorder = try Recorder.shared(.service, container: container)
    let count = Int(arguments[2]) ?? 2, hold = Double(arguments[3]) ?? 100
    DispatchQueue.concurrentPerform(iterations: count) { index in
        // A new NotificationService instance per notification, as iOS makes them, all on the one shared recorder.
        let shared = try! Recorder.shared(.service, container: container)
        let trace = shared.service.begin("c-\(getpid())-\(index)", category: "DAILY_PICK")
        trace.download(host: "cdn.rorklab.net", durationMs: 120, httpStatus: 200, bytes: 182_000, mime: "image/jpeg")
        Thread.sleep(forTimeInterval: hold / 1000)
        trace.attachment(ok: true, uti: "public.jpeg", bytes: 182_000)
        trace.delivered()
    }
    precondition(recorder.notificationsInFlight.isEmpty)
case "crash-many" where arguments.count == 3:
    let recorder = try Recorder.shared(.service, container: container)
    let traces = (0..<(Int(arguments[2]) ?? 2)).map { recorder.service.begin("k-\($0)", category: "DAILY_PICK") }
    traces.first?.delivered()
    // On the main thread recording only hands lines to the agent's queue; a process iOS kills mid-work has long
    // had them written, so this one waits for them before it dies.
    Recorder.waitUntilWritten(timeout: 10)
    kill(getpid(), SIGKILL)
case "partial" where arguments.count == 2:
    // The kernel's file size limit cuts a write short (EFBIG) as a full disk would; SIGXFSZ is ignored so the
    // write returns instead of killing the process.
    let recorder = try Recorder.shared(.service, container: container)
    signal(SIGXFSZ, SIG_IGN)
    let base = Int64(
        recorder.currentFile.map { (try? FileManager.default.attributesOfItem(atPath: $0.path))?[.size] as? NSNumber }??.int64Value ?? 0)
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
    let unlimited = limit.rlim_cur
    limit.rlim_cur = rlim_t(base + 1_000)
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
    for index in 0..<40 { recorder.log("partial line \(index) " + String(repeating: "p", count: 100)) }
    Recorder.waitUntilWritten(timeout: 10)  // written under the limit, not after it is lifted
    limit.rlim_cur = unlimited
    setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
    recorder.log("after the limit")
    print("unwritten after: \(recorder.unwrittenRecords)")
case "extension-upload" where arguments.count == 7:
    let recorder = try Recorder.shared(.service, container: container)
    let configuration = UploaderConfiguration(server: URL(string: arguments[2])!, token: arguments[3], appID: arguments[4])
    recorder.uploadsAfterDelivery(configuration, within: Double(arguments[6]) ?? 3)
    recorder.config(appGroup: appGroup)
    let trace = recorder.service.begin(arguments[5], category: "DAILY_PICK")
    trace.download(host: "cdn.rorklab.net", durationMs: 320, httpStatus: 200, bytes: 182_000, mime: "image/jpeg")
    trace.attachment(ok: true, uti: "public.jpeg", bytes: 182_000, pixelWidth: 1200, pixelHeight: 800)
    trace.delivered()
    let started = DispatchTime.now()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let report = await recorder.uploadOwnRecords()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        print(
            "sent \(report?.sent ?? -1) packed \(report?.packed ?? -1) seconds \(String(format: "%.2f", seconds)) "
                + "error \(report?.lastError ?? "none")")
        done.signal()
    }
    done.wait()
case "bench" where arguments.count == 3:
    try bench(count: Int(arguments[2]) ?? 10_000)
default:
    fail("unknown command or wrong arguments: \(arguments.joined(separator: " "))")
}
// Whatever the main thread handed to the agent's queue is written before the process exits.
Recorder.waitUntilWritten(timeout: 30)

/// The benchmark of `make bench-agent`: the cost of single record calls, and the memory the agent adds.
func bench(count: Int) throws {
    func residentBytes(_ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
    func summary(_ name: String, _ samples: [UInt64]) {
        let sorted = samples.sorted()
        func micro(_ q: Double) -> String {
            String(format: "%.1f", Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000)
        }
        print("\(name): \(sorted.count) calls, median \(micro(0.5)) µs, p99 \(micro(0.99)) µs, max \(micro(1)) µs")
    }
    // The samples' own memory is taken before the baseline.
    var events: [UInt64] = [], runs: [UInt64] = []
    events.reserveCapacity(count / 2)
    runs.reserveCapacity(count / 10)
    let before = residentBytes("VmRSS")
    let recorder = try Recorder.shared(.service, container: container)
    // Plain events: one line, one write (the record call itself).
    for index in 0..<(count / 2) {
        let id = "5E0C1A2B-3C4D-4E5F-8A9B-\(100_000_000_000 + index)"
        let start = nanoseconds()
        recorder.service.attachment(id, ok: true, uti: "public.jpeg", bytes: 182_000, pixelWidth: 1200, pixelHeight: 800)
        events.append(nanoseconds() - start)
    }
    // A whole service-extension run through its handle: begin and delivered also rewrite the in-flight marker.
    for index in 0..<(count / 10) {
        let id = "7A1B2C3D-4E5F-4A6B-8C7D-\(100_000_000_000 + index)"
        let start = nanoseconds()
        let trace = recorder.service.begin(id, category: "DAILY_PICK")
        trace.download(host: "cdn.rorklab.net", durationMs: 420, httpStatus: 200, bytes: 182_000, mime: "image/jpeg")
        trace.attachment(ok: true, uti: "public.jpeg", bytes: 182_000)
        trace.log("attached the image")
        trace.delivered()
        runs.append((nanoseconds() - start) / 5)
    }
    let after = residentBytes("VmRSS")
    summary("record (service.attachment)", events)
    summary("record, averaged over a service run through its handle (begin … delivered, marker writes included)", runs)
    print(
        "memory: resident \(before / 1024) KiB before the recorder, \(after / 1024) KiB after \(count / 2 + count / 10 * 5) records: "
            + "\(max(0, after - before) / 1024) KiB added (peak \(residentBytes("VmHWM") / 1024) KiB)")
}
