import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceSimulator

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write realistic simulated bundles: several apps, devices and categories, every failure cause.",
        discussion: """
            Writes one folder per app: device bundles (gzip, one member per process, as the agent uploads them) and \
            the backend's push.sent / push.apns_response files (plain NDJSON), each with the modification time at \
            which it was "received". Some devices have drifted configuration or a wrong clock. scenarios.json in \
            the output folder lists, for each cause, notifications that should produce it.

            The same seed always writes the same bundles.

            --incident adds a campaign gone wrong to the everyday traffic: net.rorklab.dailypick sends DAILY_PICK to \
            300 devices within ten minutes and its image host slows down, so about 40% of the service extensions \
            time out. pushtrace alerts --now within the hour after it catches it.

            Examples:
              pushtrace simulate --out bundles
              pushtrace simulate --out big --notifications 120000 --seed 7
              pushtrace simulate --out spike --incident 2026-11-14T18:00:00Z
            """)

    @Option(help: ArgumentHelp("The folder to write into (created when missing).", valueName: "dir")) var out: String
    @Option(help: "The random seed.") var seed: UInt64 = 42
    @Option(help: "How many notifications.") var notifications = 600
    @Option(help: "How many days the traffic spans.") var days = 14
    @Option(help: ArgumentHelp("The end of the simulated period (2026-11-16T00:00:00Z by default).", valueName: "when"))
    var end: String?
    @Option(
        help: ArgumentHelp(
            "Add a campaign whose service extensions time out, starting at this time (ISO 8601, within the simulated period).",
            valueName: "when"))
    var incident: String?

    func validate() throws {
        if notifications < 1 { throw ValidationError("--notifications must be at least 1") }
        if days < 1 { throw ValidationError("--days must be at least 1") }
    }

    func run() throws {
        var options = SimulationOptions(seed: seed, notifications: notifications, days: days)
        if let end { options.end = try Instant.parse(end, option: "--end") }
        if let incident {
            let start = try Instant.parse(incident, option: "--incident")
            let first = options.end - Int64(days) * 86_400_000
            // The campaign's pushes go out over ten minutes and their devices upload before the period ends.
            guard start >= first, start <= options.end - 3 * 3_600_000 else {
                throw UsageError(
                    "--incident \"\(incident)\": must fall within the simulated period, from "
                        + "\(InstantText.format(first)) UTC to 3 hours before its end (\(InstantText.format(options.end)) UTC)")
            }
            options.incident = SimulatedIncident(start: start)
        }
        let started = Date()
        let summary = try Simulator.run(options, into: URL(fileURLWithPath: out)) { done, total in
            if total >= 20_000 { printError("simulated \(done) of \(total) notifications") }
        }
        print(
            "wrote \(summary.bundles) bundles (\(summary.records) records, \(summary.notifications) notifications) "
                + "to \(out) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; "
                + "expected causes in \(out)/scenarios.json")
    }
}
