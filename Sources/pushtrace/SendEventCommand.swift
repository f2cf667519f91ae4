import ArgumentParser
import Foundation
import PushTraceRecords
import PushTraceStore

struct SendEvent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send-event",
        abstract: "Record what the push-sending backend did: push.sent, then push.apns_response.",
        discussion: """
            For scripts and backends that can run a command. Call it once when a push is sent and once with \
            APNs's answer; the notification ID is the push's apns-id (set it yourself in the request, or take \
            the apns-id header APNs returns). The event goes to a server's POST /v1/events (--server, token in \
            PUSHTRACE_TOKEN: an ingest token of the app), or straight into a local database (--db). Any language \
            can do the same with one HTTP request: see docs/agent.md.

            Examples:
              pushtrace send-event push.sent --app net.rorklab.dailypick --id 6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10 \\
                --category DAILY_PICK --mutable-content --has-alert --payload-bytes 412 --device-id d-7c1e0b \\
                --interruption-level time-sensitive --collapse-id daily-pick --expiration 1763708400 \\
                --server https://pushtrace.example.com
              pushtrace send-event push.apns_response --app net.rorklab.dailypick \\
                --id 6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10 --status 200 --server https://pushtrace.example.com
            """)

    enum Event: String, ExpressibleByArgument, CaseIterable {
        case sent = "push.sent"
        case apnsResponse = "push.apns_response"
    }

    @Argument(help: ArgumentHelp("push.sent or push.apns_response.", valueName: "event")) var event: Event
    @Option(help: ArgumentHelp("The app's ID.", valueName: "app-id")) var app: String
    @Option(help: ArgumentHelp("The notification ID: the push's apns-id.", valueName: "id")) var id: String
    @Option(help: ArgumentHelp("When it happened (ISO 8601 or epoch ms); now by default.", valueName: "time")) var at: String?

    @Option(help: ArgumentHelp("push.sent: the aps category.", valueName: "category")) var category: String?
    @Flag(help: "push.sent: aps had \"mutable-content\": 1.") var mutableContent = false
    @Flag(help: "push.sent: aps had an alert.") var hasAlert = false
    @Option(help: ArgumentHelp("push.sent: the payload's size in bytes.", valueName: "n")) var payloadBytes: Int64?
    @Option(help: ArgumentHelp("push.sent: the device's pushtrace ID, if the backend knows it.", valueName: "id"))
    var deviceID: String?
    @Option(help: ArgumentHelp("push.sent: apns-push-type (alert, background, …).", valueName: "type")) var pushType: String?
    @Option(help: ArgumentHelp("push.sent: apns-priority.", valueName: "n")) var priority: Int64?
    @Option(help: ArgumentHelp("push.sent: the payload's attachment URL.", valueName: "url")) var attachmentURL: String?
    @Option(
        help: ArgumentHelp(
            "push.sent: aps interruption-level (passive, active, time-sensitive, critical); active when left out.",
            valueName: "level"))
    var interruptionLevel: InterruptionLevelArgument?
    @Option(help: ArgumentHelp("push.sent: the apns-collapse-id header.", valueName: "id")) var collapseID: String?
    @Option(
        help: ArgumentHelp(
            "push.sent: the apns-expiration header, in epoch seconds (0: deliver now or never).", valueName: "seconds"))
    var expiration: Int64?

    @Option(help: ArgumentHelp("push.apns_response: APNs's HTTP status.", valueName: "status")) var status: Int64?
    @Option(help: ArgumentHelp("push.apns_response: APNs's reason (BadDeviceToken, …).", valueName: "reason")) var reason: String?
    @Option(help: ArgumentHelp("push.apns_response: the apns-unique-id header, where APNs returns one.", valueName: "id"))
    var apnsUniqueID: String?

    @Option(help: ArgumentHelp("Post to this pushtrace server (http://host:port) instead of a local database.", valueName: "url"))
    var server: String?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if app.isEmpty { throw ValidationError("--app is empty") }
        if id.isEmpty { throw ValidationError("--id is empty: it is the push's apns-id") }
        if let payloadBytes, payloadBytes < 0 { throw ValidationError("--payload-bytes \(payloadBytes) is negative") }
        if let expiration, expiration != 0, !WireBounds.epochSeconds.contains(expiration) {
            throw ValidationError(
                "--expiration \(expiration) is not 0 or Unix epoch seconds (the apns-expiration header)"
                    + (WireBounds.epochMilliseconds.contains(expiration) ? "; it looks like milliseconds" : ""))
        }
        if collapseID?.isEmpty == true { throw ValidationError("--collapse-id is empty: leave it out when the push has none") }
        if let collapseID, collapseID.utf8.count > 64 {
            throw ValidationError("--collapse-id is \(collapseID.utf8.count) bytes; APNs takes at most 64")
        }
        if event == .apnsResponse, interruptionLevel != nil || collapseID != nil || expiration != nil {
            throw ValidationError("--interruption-level, --collapse-id and --expiration describe push.sent, not push.apns_response")
        }
        switch event {
        case .sent:
            guard let category, !category.isEmpty else {
                throw ValidationError("push.sent needs --category (the aps category the push was sent with)")
            }
            guard payloadBytes != nil else { throw ValidationError("push.sent needs --payload-bytes") }
        case .apnsResponse:
            guard status != nil else { throw ValidationError("push.apns_response needs --status (APNs's HTTP status)") }
        }
    }

    func run() async throws {
        let ts = try at.map { try Instant.parse($0, option: "--at") } ?? Int64(Date().timeIntervalSince1970 * 1000)
        let fields: [(String, JSONValue?)] =
            switch event {
            case .sent:
                [
                    ("category", category.map(JSONValue.string)), ("mutable_content", .bool(mutableContent)),
                    ("has_alert", .bool(hasAlert)), ("payload_bytes", payloadBytes.map(JSONValue.int)),
                    ("device_id", deviceID.map(JSONValue.string)), ("push_type", pushType.map(JSONValue.string)),
                    ("priority", priority.map(JSONValue.int)), ("attachment_url", attachmentURL.map(JSONValue.string)),
                    ("interruption_level", interruptionLevel.map { .string($0.level.rawValue) }),
                    ("collapse_id", collapseID.map(JSONValue.string)), ("expiration", expiration.map(JSONValue.int)),
                ]
            case .apnsResponse:
                [
                    ("status", status.map(JSONValue.int)), ("reason", reason.map(JSONValue.string)),
                    ("apns_unique_id", apnsUniqueID.map(JSONValue.string)),
                ]
            }
        let manifest = JSONLine([
            "type": "manifest", "schema": .int(PushTraceVersion.bundleSchema),
            "bundle_id": .string(UUID().uuidString.lowercased()), "app_id": .string(app),
            "device_id": "server",
        ])
        let record = JSONLine(
            fields: [
                ("type", "event"), ("ts", .int(ts)), ("process", "server"),
                ("event", .string(event.rawValue)), ("notification_id", .string(id)),
            ] + fields)
        let body = Data(manifest.bytes + [UInt8(ascii: "\n")] + record.bytes + [UInt8(ascii: "\n")])
        if let server {
            try await post(body, to: server)
        } else {
            try store(body)
        }
    }

    private func post(_ body: Data, to server: String) async throws {
        guard let base = URL(string: server), ["http", "https"].contains(base.scheme ?? ""), base.host != nil else {
            throw UsageError("--server \(server) is not an http:// or https:// URL")
        }
        let remote = RemoteServer(base: base, token: ProcessInfo.processInfo.environment["PUSHTRACE_TOKEN"])
        let answer = try await remote.post("v1/events", ndjson: body)
        let counts = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
        print("\(event.rawValue) \(id): stored (\(counts?["accepted"] ?? 0) accepted, \(counts?["rejected"] ?? 0) rejected)")
    }

    private func store(_ body: Data) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-event-\(UUID().uuidString).ndjson")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let store = try database.openStore()
        defer { database.close(store) }
        var failure: String?
        try FileIngestor(store: store).ingest(paths: [file.path]) { _, outcome in
            switch outcome {
            case .stored(let result) where result.rejected > 0: failure = "the record was rejected"
            case .stored: break
            case .refused(let error): failure = "\(error)"
            case .unreadable(let reason): failure = reason
            }
        }
        if let failure { throw UsageError("the event was not stored: \(failure)") }
        try store.settleCauses()
        print("\(event.rawValue) \(id): stored in \(database.shownDB)")
    }
}

/// An aps `interruption-level`, as `--interruption-level` takes it.
struct InterruptionLevelArgument: ExpressibleByArgument {
    let level: InterruptionLevel

    init?(argument: String) {
        guard let level = InterruptionLevel(rawValue: argument) else { return nil }
        self.level = level
    }

    static var allValueStrings: [String] { InterruptionLevel.allCases.map(\.rawValue) }
}
