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

            Exit status: 0 with an answer, 1 when nothing is stored for the ID (unknown_notification), 2 when the \
            ID is stored for several apps and --app does not say which.
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

    func validate() throws {
        if notificationID.isEmpty { throw ValidationError("the notification ID is empty") }
    }

    func run() async throws {
        if let server = try remote.remote() { return try await ask(server) }
        let store = try database.existingStore()
        defer { database.close(store) }
        let appID = try AppChoice.app(app, ofNotification: notificationID, in: store)
        let report = try store.why(appID: appID ?? "", notificationID: notificationID)
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
}
