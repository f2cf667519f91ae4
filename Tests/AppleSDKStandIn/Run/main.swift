// The service-extension base class, run: PushTraceServiceExtension as an NSE subclass of one line, given a rich
// push whose image a real HTTP server serves (and one whose image is missing), with the agent configured into a
// real folder. scripts/check-apple-build.sh builds it against the UserNotifications stand-in, whose content types
// are subclassed here with stored values, and runs it. Prints what it checked; exits 1 on the first mismatch.
import Foundation
import PushTraceAgent
import UserNotifications

/// A push's content, with the values Apple's would hold.
final class Content: UNMutableNotificationContent {
    private var stored:
        (category: String, userInfo: [AnyHashable: Any], attachments: [UNNotificationAttachment], level: UNNotificationInterruptionLevel)
    init(
        category: String, userInfo: [AnyHashable: Any], attachments: [UNNotificationAttachment] = [],
        level: UNNotificationInterruptionLevel = .timeSensitive
    ) {
        stored = (category, userInfo, attachments, level)
    }
    override var interruptionLevel: UNNotificationInterruptionLevel {
        get { stored.level }
        set { stored.level = newValue }
    }
    override var categoryIdentifier: String {
        get { stored.category }
        set { stored.category = newValue }
    }
    override var userInfo: [AnyHashable: Any] { stored.userInfo }
    override var attachments: [UNNotificationAttachment] {
        get { stored.attachments }
        set { stored.attachments = newValue }
    }
    override func mutableCopy() -> Any {
        Content(category: stored.category, userInfo: stored.userInfo, attachments: stored.attachments, level: stored.level)
    }
}

final class Request: UNNotificationRequest {
    private let values: (identifier: String, content: UNNotificationContent)
    init(_ identifier: String, _ content: UNNotificationContent) { values = (identifier, content) }
    override var identifier: String { values.identifier }
    override var content: UNNotificationContent { values.content }
}

/// The guide's NSE: the base class, configured elsewhere (below, into a folder rather than an App Group).
nonisolated final class NotificationService: PushTraceServiceExtension {}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("service-extension run: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let folder = Optional(URL(fileURLWithPath: arguments[1])), let server = URL(string: arguments[2]) else {
    fail("usage: service-extension-run FOLDER http://127.0.0.1:PORT/")
}
// A server the uploader refuses (not http): the extension's own upload stays off, and recording goes on.
PushTrace.configure(
    PushTrace.Configuration(appGroup: "group.net.rorklab.dailypick", server: URL(string: "ftp://pushtrace.example.com")!, token: "pt_x"),
    directory: folder, process: .service)

/// Runs one notification through a new instance, as iOS does, and returns what the content handler was given.
@MainActor func deliver(_ identifier: String, image: String) -> UNNotificationContent {
    let content = Content(category: "DAILY_PICK", userInfo: ["aps": ["mutable-content": 1], "image-url": server.absoluteString + image])
    let delivered = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var handed: [UNNotificationContent] = []
    let service = NotificationService()
    service.didReceive(Request(identifier, content)) { content in
        handed.append(content)
        delivered.signal()
    }
    guard delivered.wait(timeout: .now() + 30) == .success else { fail("\(identifier): the content handler was not called in 30 s") }
    service.serviceExtensionTimeWillExpire()  // too late: the handler is not called again
    Thread.sleep(forTimeInterval: 0.2)
    guard handed.count == 1 else { fail("\(identifier): the content handler was called \(handed.count) times") }
    return handed[0]
}

let attached = deliver("run-1", image: "pick.png")
guard let file = attached.attachments.first?.url, file.pathExtension == "png", FileManager.default.fileExists(atPath: file.path) else {
    fail("run-1: delivered without the image attached")
}
let missing = deliver("run-2", image: "gone.png")
guard missing.attachments.isEmpty else { fail("run-2: an attachment for an image the server does not have") }
guard PushTrace.recorder?.waitUntilWritten(timeout: 10) == true else { fail("the records were not written in 10 s") }

// The records, as the server will read them.
let records = folder.appendingPathComponent("pushtrace/records")
var events: [String: [[String: Any]]] = [:]
for name in try FileManager.default.contentsOfDirectory(atPath: records.path).sorted() {
    for line in try String(contentsOf: records.appendingPathComponent(name), encoding: .utf8).split(separator: "\n") {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let id = object["notification_id"] as? String
        else { continue }
        events[id, default: []].append(object)
    }
}
@MainActor func names(_ id: String) -> [String] { events[id, default: []].compactMap { $0["event"] as? String } }
let expected = [
    "run-1": ["service.received", "service.download", "service.attachment", "service.delivered"],
    "run-2": ["service.received", "service.download", "service.delivered"],
]
for (id, want) in expected.sorted(by: { $0.key < $1.key }) where names(id) != want {
    fail("\(id): recorded \(names(id)), not \(want)")
}
let attachment = events["run-1"]!.first { $0["event"] as? String == "service.attachment" }!
guard attachment["ok"] as? Bool == true, attachment["uti"] as? String == "public.png" else { fail("run-1: \(attachment)") }
let status = events["run-2"]!.first { $0["event"] as? String == "service.download" }!["http_status"] as? Int
guard status == 404 else { fail("run-2: the download recorded status \(String(describing: status)), not 404") }
let level = events["run-1"]!.first { $0["event"] as? String == "service.delivered" }!["interruption_level"] as? String
guard level == "time-sensitive" else { fail("run-1: service.delivered recorded the level \(String(describing: level))") }
print(
    "the base class delivered once each: run-1 with its image attached, run-2 without; recorded \(names("run-1")) and \(names("run-2")), delivered at level \(level!)"
)
