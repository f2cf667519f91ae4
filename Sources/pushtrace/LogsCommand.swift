import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceRecords
import PushTraceStore

struct Logs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The log lines of one notification from every process, in time order.",
        discussion: """
            What the app and its extensions logged with this notification's ID (records of type `log`), merged \
            in corrected time.

            Example:
              pushtrace logs 6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("The app, when the ID is stored for several.", valueName: "app-id")) var app: String?
    @Argument(help: ArgumentHelp("The notification ID.", valueName: "notification-id")) var notificationID: String
    @Option(help: "text or json.") var format: OutputFormat = .text

    func validate() throws {
        if notificationID.isEmpty { throw ValidationError("the notification ID is empty") }
    }

    func run() async throws {
        let store = try database.existingStore()
        defer { database.close(store) }
        guard let appID = try await AppChoice.app(app, ofNotification: notificationID, in: store) else {
            printError("nothing is stored for notification \(notificationID)")
            throw NegativeAnswer()
        }
        let entries = try await store.logs(appID: appID, notificationID: notificationID)
        if format == .json {
            print(JSONValue.array(entries.map(\.jsonValue)).jsonText())
            return
        }
        for entry in entries {
            // What the device logged is shown, never obeyed: a message cannot move the cursor or forge a line.
            let safe = TerminalText.escaped
            let process = safe(entry.record.process ?? "?").padding(toLength: 8, withPad: " ", startingAt: 0)
            let level = safe(entry.record.level ?? "?").padding(toLength: 8, withPad: " ", startingAt: 0)
            print("\(Instant.format(entry.outOfRangeTs ?? entry.ts))  \(process)\(level)\(safe(entry.record.message ?? ""))")
        }
        if entries.isEmpty { print("no log lines for \(TerminalText.escaped(notificationID)) in \(appID)") }
    }
}
