import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceRecords
import PushTraceStore

struct Why: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Why did a notification's custom card (or its button) not work? The cause, the evidence, the fix.",
        discussion: """
            Prints the primary cause with a sentence and what to change, every other finding, and the timeline of \
            the notification's steps across the backend, the service extension, the content extension and the app \
            (times relative to the first step, device clocks corrected).

            Examples:
              pushtrace why 6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10
              pushtrace why 6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10 --format json
              pushtrace why promo-42 --app net.rorklab.dailypick
              PUSHTRACE_TOKEN=pt_… pushtrace why promo-42 --server https://pushtrace.example.com
              pushtrace why 6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10 --follow --server https://pushtrace.example.com

            --follow prints the notification's records as they are uploaded and its answer whenever it changes, \
            until the answer is final (exit status 0) or Ctrl-C: from a server, its live stream \
            (GET /v1/notifications/ID/events); from --db, the store, read twice a second. An ID nothing is stored \
            for is answered at once, as without --follow. With --format json each event is one line: {"event": \
            "record" or "cause", "data": {…}}.

            Exit status: 0 with an answer, 1 when nothing is stored for the ID (unknown_notification) or a followed \
            stream ended before the answer was final, 2 when the ID is stored for several apps and --app does not \
            say which.
            """)

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var remote: RemoteOptions

    @Option(help: ArgumentHelp("The app, when the ID is stored for several.", valueName: "app-id"))
    var app: String?

    @Argument(
        help: ArgumentHelp(
            "The notification ID: the apns-id, as UNNotificationRequest.identifier shows it.",
            valueName: "notification-id"))
    var notificationID: String

    @Option(help: "text (readable) or json (docs/spec.md §7).")
    var format: OutputFormat = .text

    @Flag(help: "Follow the notification live until its answer is final (see below).")
    var follow = false

    func validate() throws {
        if notificationID.isEmpty { throw ValidationError("the notification ID is empty") }
    }

    func run() async throws {
        if let server = try remote.remote() {
            return try await follow ? followStream(server) : ask(server)
        }
        let store = try database.existingStore()
        defer { database.close(store) }
        if follow { return try await followStore(store) }
        let appID = try await AppChoice.app(app, ofNotification: notificationID, in: store)
        let report = try await store.why(appID: appID ?? "", notificationID: notificationID)
        print(format == .json ? report.jsonValue.jsonText() : report.text, terminator: format == .json ? "\n" : "")
        if report.diagnosis.cause == .unknownNotification { throw NegativeAnswer() }
    }

    /// The same answer from a server: it renders the text itself, and the JSON is printed as the local one is.
    private func ask(_ server: RemoteServer) async throws {
        let answer = try await server.get(
            "v1/notifications/\(notificationID)", query: ["app": app],
            accept: format == .json ? "application/json" : "text/plain",
            accepting: [200, 404])
        if format == .json {
            guard case .object(var fields) = try JSONDecoder().decode(JSONValue.self, from: answer.body) else {
                throw UsageError("\(server.base) did not answer a why document")
            }
            // A 404's body is the unknown_notification answer plus the error fields of docs/spec.md §8.
            fields["error"] = nil
            fields["message"] = nil
            print(JSONValue.object(fields).jsonText())
        } else {
            print(answer.text, terminator: "")
        }
        if answer.status == 404 { throw NegativeAnswer() }
    }

    /// `--follow --db`: the store read twice a second, through the same ``WhyFollow`` as the server's stream.
    private func followStore(_ store: any TraceStore) async throws {
        var follow = WhyFollow()
        var printer = FollowPrinter(format: format)
        while true {
            let appID = try await AppChoice.app(app, ofNotification: notificationID, in: store) ?? ""
            let report = try await store.why(appID: appID, notificationID: notificationID)
            // As the server's stream does: an ID nothing is stored for is answered at once, not waited on.
            if report.diagnosis.cause == .unknownNotification {
                print(format == .json ? report.jsonValue.jsonText() : report.text, terminator: format == .json ? "\n" : "")
                throw NegativeAnswer()
            }
            for event in follow.events(for: report) { printer.print(event) }
            if !report.mayStillChange { return }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// `--follow --server`: the server's event stream.
    private func followStream(_ server: RemoteServer) async throws {
        var printer = FollowPrinter(format: format)
        var ended: String?
        for try await event in try server.events("v1/notifications/\(notificationID)/events", query: ["app": app]) {
            switch event.name {
            case "record":
                guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(event.data.utf8)) else { continue }
                printer.print(.record(value))
            case "cause":
                guard case .object(var fields) = try? JSONDecoder().decode(JSONValue.self, from: Data(event.data.utf8)) else {
                    continue
                }
                let final = fields["final"] == .bool(true)
                fields["final"] = nil
                printer.print(.cause(.object(fields), final: final))
                if final { return }
            case "end":
                let fields = try? JSONDecoder().decode(JSONValue.self, from: Data(event.data.utf8))
                ended = fields?.objectValue?["reason"]?.stringValue ?? "ended"
            default: continue
            }
            if ended != nil { break }
        }
        FileHandle.standardError.write(
            Data("pushtrace: the stream ended (\(TerminalText.escaped(ended ?? "closed"))) before the answer was final\n".utf8))
        throw NegativeAnswer()
    }
}

/// Prints live-follow events: readable lines, or one JSON object per event.
struct FollowPrinter {
    var format: OutputFormat
    private var text = WhyFollowText()

    init(format: OutputFormat) {
        self.format = format
    }

    mutating func print(_ event: WhyFollow.Event) {
        let output: String
        switch format {
        case .json:
            // The data is the stream's own line: compact JSON, `final` added to a cause.
            output = "{\"event\":\"\(event.name)\",\"data\":\(event.data)}\n"
        default:
            output = text.lines(for: event)
        }
        FileHandle.standardOutput.write(Data(output.utf8))
    }
}
