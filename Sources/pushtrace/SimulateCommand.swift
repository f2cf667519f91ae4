import ArgumentParser
import Foundation
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

            Examples:
              pushtrace simulate --out bundles
              pushtrace simulate --out big --notifications 120000 --seed 7
            """)

    @Option(help: ArgumentHelp("The folder to write into (created when missing).", valueName: "dir")) var out: String
    @Option(help: "The random seed.") var seed: UInt64 = 42
    @Option(help: "How many notifications.") var notifications = 600
    @Option(help: "How many days the traffic spans.") var days = 14
    @Option(help: ArgumentHelp("The end of the simulated period (2026-11-16T00:00:00Z by default).", valueName: "when"))
    var end: String?

    func validate() throws {
        if notifications < 1 { throw ValidationError("--notifications must be at least 1") }
        if days < 1 { throw ValidationError("--days must be at least 1") }
    }

    func run() throws {
        var options = SimulationOptions(seed: seed, notifications: notifications, days: days)
        if let end { options.end = try Instant.parse(end, option: "--end") }
        let started = Date()
        let summary = try Simulator.run(options, into: URL(fileURLWithPath: out)) { done, total in
            if total >= 20_000 { printError("simulated \(done) of \(total) notifications") }
        }
        print("wrote \(summary.bundles) bundles (\(summary.records) records, \(summary.notifications) notifications) "
              + "to \(out) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; "
              + "expected causes in \(out)/scenarios.json")
    }
}
