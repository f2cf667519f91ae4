import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceStore

struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The weekly delivery report of one app, against the week before.",
        discussion: """
            The funnel (sent → accepted by APNs → reached a device → service extension ran → delivered / timed
            out / crashed → expanded → acted on) with each step's rate and its change in percentage points;
            service-extension durations (nearest-rank p50/p90/p99) and the timeout rate per day; attachments;
            causes, each with a notification to run `pushtrace why` on; tables by category, app version and OS
            version (a row whose timeout or crash rate is at least twice the rest's is marked); actions by
            response option.

            Weeks are ISO weeks in UTC (Monday 00:00 starts one); a notification belongs to the period of its
            first record. Without --week or --from/--to: the last complete week.

            Examples:
              pushtrace report --app net.rorklab.dailypick
              pushtrace report --app net.rorklab.dailypick --week 2026-W46 --format json
              pushtrace report --app net.rorklab.dailypick --from 2026-11-01 --to 2026-11-14 --format markdown
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, markdown }

    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("The app to report on.", valueName: "app-id")) var app: String
    @Option(help: ArgumentHelp("An ISO week, e.g. 2026-W46.", valueName: "yyyy-Www")) var week: String?
    @Option(help: ArgumentHelp("The first day of a date range (with --to).", valueName: "yyyy-mm-dd")) var from: String?
    @Option(help: ArgumentHelp("The last day of the range, included.", valueName: "yyyy-mm-dd")) var to: String?
    @Option(help: "text (80 columns), json or markdown.") var format: Format = .text

    func validate() throws {
        _ = try period(now: 0)
    }

    /// The requested period; the last complete ISO week before `now` when none was given.
    func period(now: Int64) throws -> ReportPeriod {
        switch (week, from, to) {
        case (let week?, nil, nil):
            guard let period = ReportPeriod(isoWeek: week) else {
                throw ValidationError("--week \(week) is not an ISO week: use YYYY-Www (2000 to 2199), e.g. 2026-W46")
            }
            return period
        case (nil, let from?, let to?):
            guard let period = ReportPeriod(from: from, to: to) else {
                throw ValidationError("--from \(from) --to \(to) is not a range of dates: use YYYY-MM-DD, --to not before --from")
            }
            return period
        case (nil, nil, nil):
            return ReportPeriod(weekContaining: now).previous
        case (_?, _, _):
            throw ValidationError("give either --week or --from and --to, not both")
        default:
            throw ValidationError("--from and --to go together")
        }
    }

    func run() async throws {
        let store = try database.existingStore()
        defer { database.close(store) }
        let report = try await store.report(appID: app, period: period(now: Int64(Date().timeIntervalSince1970 * 1000)))
        if report.figures.notifications == 0, report.previous.notifications == 0 {
            try await database.requireKnownApp(app, in: store)
        }
        switch format {
        case .json: try printJSON(report)
        case .text: print(ReportText.text(report), terminator: "")
        case .markdown: print(ReportText.markdown(report), terminator: "")
        }
    }
}
