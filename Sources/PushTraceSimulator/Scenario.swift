import PushTraceCore
import PushTraceRecords

/// One record before it is written: its true time, the process that writes it, and its fields in order.
struct PendingRecord {
    var ts: Int64
    var process: ProcessKind
    var type: String = "event"
    var fields: [(String, JSONValue?)]

    /// The NDJSON line, with `ts` on the writer's clock.
    func line(clockAheadMs: Int64) -> String {
        let head: [(String, JSONValue?)] = [
            ("type", .string(type)), ("ts", .int(ts + clockAheadMs)),
            ("process", .string(process.rawValue)),
        ]
        return JSONLine(fields: head + fields).text
    }
}

/// A simulated notification: where it went, when, and the cause the diagnosis should find.
struct SimulatedNotification {
    let id: String
    let device: SimulatedDevice
    let category: String
    let sentTs: Int64
    let expected: Cause
}

/// Writes the records of one notification so that it ends in the expected cause.
struct ScenarioBuilder {
    var server: [PendingRecord] = []
    var device: [PendingRecord] = []
    private let n: SimulatedNotification

    init(_ notification: SimulatedNotification) { n = notification }

    private var app: SimulatedApp { n.device.app }

    private mutating func event(_ at: Int64, _ process: ProcessKind, _ name: EventName, _ fields: [(String, JSONValue?)] = []) {
        let id = process == .server ? n.id.lowercased() : n.id
        let record = PendingRecord(
            ts: at, process: process,
            fields: [("event", .string(name.rawValue)), ("notification_id", .string(id))] + fields)
        if process == .server { server.append(record) } else { device.append(record) }
    }

    private mutating func log(_ at: Int64, _ process: ProcessKind, _ level: String, _ message: String) {
        device.append(
            PendingRecord(
                ts: at, process: process, type: "log",
                fields: [
                    ("level", .string(level)), ("message", .string(message)),
                    ("notification_id", .string(n.id)),
                ]))
    }

    mutating func build(_ rng: inout SeededRandom) {
        let c = n.expected
        let t = n.sentTs
        let category = c == .categoryUnregistered ? Self.typo(n.category) : n.category
        let imageName = c == .attachmentFailed && rng.chance(0.3) ? "hero-\(rng.int(100...999))" : "hero-\(rng.int(100...999)).jpg"
        event(
            t, .server, .pushSent,
            [
                ("category", .string(category)), ("mutable_content", .bool(c != .mutableContentMissing)),
                ("has_alert", .bool(c != .alertMissing)), ("payload_bytes", .int(rng.int(380...1900))),
                ("device_id", .string(n.device.id)), ("push_type", "alert"), ("priority", 10),
                ("attachment_url", .string("https://\(app.imageHost)/push/\(imageName)")),
            ])
        if c == .apnsRejected {
            let (status, reason): (Int64, String) = rng.chance(0.5) ? (400, "BadDeviceToken") : (410, "Unregistered")
            event(t + rng.int(40...220), .server, .pushAPNsResponse, [("status", .int(status)), ("reason", .string(reason))])
            return
        }
        event(t + rng.int(40...220), .server, .pushAPNsResponse, [("status", 200)])
        switch c {
        case .alertMissing, .notDelivered, .awaitingDeviceLogs: return
        default: break
        }
        var now = t + rng.int(300...2_500)
        if c == .mutableContentMissing || c == .serviceNotRun {
            expand(at: now + rng.int(2_000...90_000), &rng, category: category)
            return
        }
        let received = now
        event(now, .service, .serviceReceived, [("category", .string(category))])
        log(now + 1, .service, "info", "downloading attachment \(imageName)")
        let big = c == .serviceCrashed || (c == .attachmentFailed && imageName.hasSuffix(".jpg") && rng.chance(0.4))
        let duration = c == .serviceTimeout ? rng.int(27_000...29_500) : rng.int(180...1_600)
        let bytes = big ? rng.int(11_000_000...14_000_000) : rng.int(90_000...1_400_000)
        now += duration
        if c == .serviceCrashed {
            log(now, .service, "warning", "decoding a \(bytes / 1_000_000) MB image")
            // Found at the extension's next launch, when the previous run did not finish.
            event(
                now + rng.int(600_000...7_200_000), .service, .serviceAbnormalExit,
                [("last_footprint_bytes", .int(rng.int(24_500_000...31_000_000)))])
            expand(at: now + 5_000, &rng, category: category, viewOnly: true)
            return
        }
        let notFound = c == .attachmentFailed && !big && imageName.hasSuffix(".jpg")
        event(
            now, .service, .serviceDownload,
            [
                ("url_host", .string(app.imageHost)), ("duration_ms", .int(duration)),
                ("http_status", .int(notFound ? 404 : 200)), ("bytes", .int(notFound ? 162 : bytes)),
                ("mime", notFound ? "text/html" : "image/jpeg"),
            ])
        if c == .serviceTimeout {
            now = received + rng.int(29_800...30_000)
            event(now, .service, .serviceExpired, [("elapsed_ms", .int(now - received))])
            event(now + 15, .service, .serviceDelivered, [("elapsed_ms", .int(now + 15 - received))])
            return
        }
        now += 20
        let attachmentOK = !(c == .attachmentFailed && (notFound || !imageName.hasSuffix(".jpg")))
        event(
            now, .service, .serviceAttachment,
            [
                ("ok", .bool(attachmentOK)), ("uti", attachmentOK ? "public.jpeg" : nil), ("bytes", .int(bytes)),
                ("pixel_width", 1200), ("pixel_height", 800),
                ("error", attachmentOK ? nil : (notFound ? "download failed" : "unrecognized attachment file type")),
            ])
        now += rng.int(5...40)
        event(now, .service, .serviceDelivered, [("elapsed_ms", .int(now - received))])
        switch c {
        case .attachmentFailed, .categoryUnregistered:
            if rng.chance(0.5) {
                event(
                    now + rng.int(4_000...600_000), .app, .appResponse,
                    [("action", "com.apple.UNNotificationDefaultActionIdentifier")])
            }
        case .notExpanded:
            if rng.chance(0.4) {
                event(
                    now + rng.int(4_000...600_000), .app, .appResponse,
                    [("action", "com.apple.UNNotificationDefaultActionIdentifier")])
            }
        default:
            expand(at: now + rng.int(3_000...3_600_000), &rng, category: category)
        }
    }

    /// The user expands the notification: the content extension draws the card and maybe handles an action.
    private mutating func expand(at start: Int64, _ rng: inout SeededRandom, category: String, viewOnly: Bool = false) {
        let c = n.expected
        var now = start
        event(now, .content, .contentReceived, [("category", .string(category))])
        now += rng.int(30...160)
        let oversized = c == .contentCrashed
        event(
            now, .content, .contentImage,
            [
                ("pixel_width", .int(oversized ? 8064 : 1200)), ("pixel_height", .int(oversized ? 6048 : 800)),
                ("bytes", .int(oversized ? 14_800_000 : rng.int(90_000...900_000))), ("decode_ms", .int(rng.int(8...60))),
            ])
        if oversized {
            event(
                now + rng.int(300_000...3_600_000), .content, .contentAbnormalExit,
                [("last_footprint_bytes", .int(rng.int(118_000_000...140_000_000)))])
            return
        }
        if viewOnly || c == .notExpanded { return }
        let actions = app.categories.first { $0.id == category }?.actions ?? app.categories[0].actions
        now += rng.int(2_000...25_000)
        let key = "saved_items"
        switch c {
        case .completionNotCalled:
            event(now, .content, .contentCompletionTimeout, [("action", .string(actions[0])), ("waited_ms", 5_000)])
        case .dismissedBeforeUpdate:
            event(now, .content, .sharedWrite, [("suite", .string(app.appGroup)), ("key", .string(key))])
            event(
                now + rng.int(40...400), .content, .contentAction,
                [
                    ("action", .string(actions[0])), ("response", "dismiss"), ("elapsed_ms", .int(rng.int(40...400))),
                ])
        case .appGroupMismatch:
            event(now, .content, .sharedWrite, [("suite", .string(app.appGroup)), ("key", .string(key))])
            event(now + 120, .content, .contentAction, [("action", .string(actions[0])), ("response", "doNotDismiss")])
            event(
                now + rng.int(60_000...900_000), .app, .sharedRead,
                [("suite", .string(n.device.appSuite)), ("key", .string(key)), ("found", false)])
        case .forwardedActionUnhandled:
            event(now, .content, .contentAction, [("action", .string(actions.last!)), ("response", "dismissAndForwardAction")])
        default:
            if rng.chance(0.35) { return }  // Looked at the card, pressed nothing.
            if actions.count > 1 && rng.chance(0.6) {
                event(now, .content, .sharedWrite, [("suite", .string(app.appGroup)), ("key", .string(key))])
                event(
                    now + rng.int(60...300), .content, .contentAction,
                    [("action", .string(actions[0])), ("response", "doNotDismiss"), ("elapsed_ms", .int(rng.int(20...90)))])
            } else {
                event(now, .content, .contentAction, [("action", .string(actions.last!)), ("response", "dismissAndForwardAction")])
                event(now + rng.int(300...1_500), .app, .appResponse, [("action", .string(actions.last!))])
                event(
                    now + rng.int(1_600...3_000), .app, .sharedRead,
                    [("suite", .string(n.device.appSuite)), ("key", .string(key)), ("found", true)])
            }
        }
    }

    /// A one-character slip of a category identifier, as typed into a backend.
    static func typo(_ category: String) -> String {
        var chars = Array(category)
        let i = chars.count - 2
        chars.swapAt(i, i + 1)
        return String(chars)
    }
}
