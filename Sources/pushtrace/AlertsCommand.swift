import ArgumentParser
import Foundation
import PushTraceConsole
import PushTraceCore
import PushTraceStore

struct Alerts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Evaluate the alert rules; exit status 1 when one fires.",
        discussion: """
            Each rule compares, per app and category, a failure rate of the last window before --now with the
            same app and category over the baseline days before that window. It fires only on a clear rise: the
            window holds at least min_window notifications, and the window rate's lower confidence bound (one-
            sided Wilson, 99%) exceeds both baseline × factor and baseline + min_increase.

            Built-in rules (window 60 min, baseline 7 days, min_window 50, factor 2):
              service_timeout_spike     service.expired per service.received
              attachment_failure_spike  failed downloads or attachments per notification that tried one
              extension_crash_spike     extension abnormal exits per notification an extension ran for

            And one per app, week over week (window 7 days, min_window 50 devices in each week, factor 1.5,
            min_increase 0.03):
              notifications_disabled_rise  devices whose notification settings show nothing per device with
                                           settings, among the app's devices active in the week

            --rules FILE changes them (YAML; see docs/alerts.md):
              rules:
                - name: service_timeout_spike
                  min_window: 100
                - name: extension_crash_spike
                  enabled: false

            Examples:
              pushtrace alerts
              pushtrace alerts --now 2026-11-15T12:00:00Z --format json
              pushtrace alerts --webhook https://hooks.slack.com/services/…  # posts {"text", "firing"} when one fires
              pushtrace alerts --public-url https://push.example.com  # each alert links to its notifications
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("Evaluate as of this instant (2026-11-15T12:00:00Z, epoch ms); default now.", valueName: "when"))
    var now: String?
    @Option(help: ArgumentHelp("A YAML file of rules and thresholds.", valueName: "file")) var rules: String?
    @Option(help: ArgumentHelp("POST the firing alerts here as JSON, with a text field for a chat channel.", valueName: "url"))
    var webhook: String?
    @Option(help: "Attempts at the webhook before giving up (backoff 1 s, 2 s, 4 s, … with jitter).")
    var webhookAttempts = 5
    @Option(
        help: ArgumentHelp(
            "The console's address (https://push.example.com; env PUSHTRACE_PUBLIC_URL): each alert links to its notifications there.",
            valueName: "url"))
    var publicURL: String?
    @Option(help: "text or json.") var format: OutputFormat = .text

    func validate() throws {
        if let webhook, URL(string: webhook)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--webhook \(webhook) is not an http:// or https:// URL")
        }
        if webhookAttempts < 1 { throw ValidationError("--webhook-attempts must be at least 1") }
        _ = try console()
    }

    /// `--public-url`, or PUSHTRACE_PUBLIC_URL.
    func console() throws -> PublicURL? {
        guard let text = publicURL ?? ProcessInfo.processInfo.environment["PUSHTRACE_PUBLIC_URL"].flatMap({ $0.isEmpty ? nil : $0 })
        else { return nil }
        guard let url = PublicURL(text) else {
            throw ValidationError("--public-url \(text) is not an http:// or https:// URL without a query")
        }
        return url
    }

    func run() async throws {
        let instant = try now.map { try Instant.parse($0, option: "--now") } ?? Int64(Date().timeIntervalSince1970 * 1000)
        let ruleSet = try Self.loadRules(rules)
        var report = try await database.withExistingStore { try await $0.alerts(ruleSet.active, now: instant) }
        if let console = try console() { report = console.linking(report) }
        if format == .json { try printJSON(report) } else { print(report.text, terminator: "") }
        guard !report.firing.isEmpty else { return }
        if let webhook, let url = URL(string: webhook) {
            try await Webhook(url: url, attempts: webhookAttempts).post(try Self.webhookBody(report))
        }
        throw NegativeAnswer()
    }

    /// The rules of `path` (the built-in ones when nil), or a usage error naming what is wrong in the file.
    static func loadRules(_ path: String?) throws -> AlertRuleSet {
        guard let path else { return AlertRuleSet() }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw UsageError("--rules \(path): cannot read the file")
        }
        do {
            return try AlertRuleSet(yaml: text)
        } catch let error as AlertConfigError {
            throw UsageError("--rules \(path): \(error.message)")
        }
    }

    /// `{"text": …, "firing": […]}`: Slack, Mattermost and most chat webhooks show `text`.
    static func webhookBody(_ report: AlertReport) throws -> Data {
        struct Body: Encodable {
            var text: String
            var firing: [FiringAlert]
        }
        let text =
            "pushtrace: \(report.firing.count) alert\(report.firing.count == 1 ? "" : "s") firing\n"
            + report.firing.map { "• " + $0.text + ($0.consoleURL.map { " " + $0 } ?? "") }.joined(separator: "\n")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Body(text: text, firing: report.firing))
    }
}
