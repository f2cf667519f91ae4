import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceStore

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find notifications by app, cause, category, device and time.",
        discussion: """
            Reads the per-notification summaries, newest first. Times are the notification's first record (UTC). \
            An --app of which nothing is stored is an error (exit 2) that lists the apps there are.

            Examples:
              pushtrace search --cause service_timeout
              pushtrace search --app net.rorklab.dailypick --category DAILY_PICK
              pushtrace search --since 2026-11-09 --until 2026-11-16
              pushtrace search --device d-7c1e0b --format json
              PUSHTRACE_TOKEN=pt_… pushtrace search --cause service_timeout --server http://127.0.0.1:8080

            Causes: \(Cause.allCases.map(\.rawValue).joined(separator: ", ")).
            """)

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var remote: RemoteOptions
    @Option(help: ArgumentHelp("Only this app.", valueName: "app-id")) var app: String?
    @Option(help: ArgumentHelp("Only notifications with this primary cause.", valueName: "cause")) var cause: String?
    @Option(help: ArgumentHelp("Only this category.", valueName: "category")) var category: String?
    @Option(help: ArgumentHelp("Only this device.", valueName: "device-id")) var device: String?
    @Option(help: ArgumentHelp("First record at or after (2026-11-10, 2026-11-10T08:30:00Z, epoch ms).", valueName: "when"))
    var since: String?
    @Option(help: ArgumentHelp("First record before.", valueName: "when")) var until: String?
    @Option(help: "At most this many rows.") var limit = 50
    @Option(help: "text (a table) or json.") var format: OutputFormat = .text

    func validate() throws {
        if let cause, Cause(rawValue: cause) == nil {
            throw ValidationError("--cause \(cause) is not a cause; use one of " + Cause.allCases.map(\.rawValue).joined(separator: ", "))
        }
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let rows: [NotificationSummary]
        if let server = try remote.remote() {
            let answer = try await server.get(
                "v1/notifications",
                query: [
                    "app": app, "cause": cause, "category": category, "device": device, "limit": String(limit),
                    "since": try since.map { String(try Instant.parse($0, option: "--since")) },
                    "until": try until.map { String(try Instant.parse($0, option: "--until")) },
                ], accept: "application/json")
            rows = try JSONDecoder().decode([NotificationSummary].self, from: answer.body)
        } else {
            let query = SearchQuery(
                appID: app, cause: cause.flatMap(Cause.init(rawValue:)), category: category, deviceID: device,
                since: try since.map { try Instant.parse($0, option: "--since") },
                until: try until.map { try Instant.parse($0, option: "--until") }, limit: limit)
            let store = try database.existingStore()
            defer { database.close(store) }
            rows = try await store.search(query)
            if rows.isEmpty, let app { try await database.requireKnownApp(app, in: store) }
        }
        if format == .json {
            try printJSON(rows)
            return
        }
        var table = TextTable(["FIRST SEEN (UTC)", "APP", "NOTIFICATION", "CATEGORY", "CAUSE", "DEVICE"])
        for row in rows {
            table.add([
                Instant.format(row.firstTs), row.appID, row.notificationID, row.category ?? "-",
                row.cause ?? "(pending)", row.deviceID ?? "-",
            ])
        }
        print(table.rendered)
        print("\(rows.count) notification\(rows.count == 1 ? "" : "s")\(rows.count == limit ? " (more with --limit)" : "")")
    }
}
