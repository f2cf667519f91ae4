import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceStore

struct Lint: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check an APNs payload before it is sent.",
        discussion: """
            Finds the mistakes that make a rich notification silently lose its card: no alert, no \
            "mutable-content": 1 when the app has a service extension (or the payload carries an attachment URL), \
            a payload over 4096 bytes, an attachment URL whose file name has no extension the system recognises. \
            With --app, the category is checked against what that app's processes last recorded (docs/protocol.md#config-records): \
            registered by the app (else no action buttons) and handled by its content extension (else no custom \
            card), with the nearest name when it is a near miss.

            Each finding comes with its fix. Exit status 1 when any finding is an error, 0 otherwise, 2 when the \
            file is not a JSON payload.

            Examples:
              pushtrace lint payload.json
              pushtrace lint payload.json --app net.rorklab.dailypick --db pushtrace.sqlite
            """)

    @OptionGroup var database: DatabaseOptions
    @Argument(help: ArgumentHelp("The payload as it will be sent: {\"aps\": {…}, …}.", valueName: "payload.json"))
    var payload: String
    @Option(help: ArgumentHelp("Check the category against this app's recorded configuration.", valueName: "app-id"))
    var app: String?
    @Option(help: "text or json.") var format: OutputFormat = .text

    func run() async throws {
        guard let bytes = FileManager.default.contents(atPath: payload) else {
            throw UsageError("cannot read \(payload)")
        }
        var configuration: AppConfiguration?
        if let app {
            configuration = try await database.withExistingStore { try await $0.latestConfiguration(appID: app) }
            if configuration == nil {
                printError("note: no config record of \(app) is stored in \(database.shownDB): the category is not checked")
            }
        }
        let findings: [LintFinding]
        do {
            findings = try PayloadLint.check(Array(bytes), app: configuration)
        } catch {
            throw UsageError("\(payload): \(error.message)")
        }
        if format == .json {
            try printJSON(LintOutput(payload: payload, findings: findings))
        } else if findings.isEmpty {
            print("\(payload): no problems found")
        } else {
            for finding in findings {
                print("\(finding.severity.rawValue): [\(finding.code)] \(finding.message)")
                print("  fix: \(finding.fix)")
            }
        }
        if findings.contains(where: { $0.severity == .error }) { throw NegativeAnswer() }
    }
}

/// `lint --format json`.
private struct LintOutput: Encodable {
    var payload: String
    var findings: [LintFinding]
}
