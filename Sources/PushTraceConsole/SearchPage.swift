import PushTraceCore
import PushTraceStore

/// The search form's fields as the viewer typed them (shown back as typed, escaped), shared by the overview and
/// the search page.
public struct SearchForm: Sendable {
    struct Option: Sendable {
        var value: String
        var selected: Bool
    }

    var causeOptions: [Option]
    var showApp: Bool
    var appValue: String
    var category: String
    var device: String
    var since: String
    var until: String

    /// `showApp` for a viewer of every app (an admin token), who may narrow the search to one.
    public init(
        cause: String? = nil, app: String? = nil, category: String? = nil, device: String? = nil, since: String? = nil,
        until: String? = nil, showApp: Bool
    ) {
        causeOptions = Cause.allCases.map { Option(value: $0.rawValue, selected: $0.rawValue == cause) }
        self.showApp = showApp
        appValue = HTMLText.visible(app ?? "")
        self.category = HTMLText.visible(category ?? "")
        self.device = HTMLText.visible(device ?? "")
        self.since = HTMLText.visible(since ?? "")
        self.until = HTMLText.visible(until ?? "")
    }
}

/// `GET /ui/search`: notifications newest first, a page at a time, each linking to its `why` page.
public struct SearchPage: Sendable {
    struct Row: Sendable {
        var firstSeen: String
        var id: String
        var url: String
        var app: String
        var category: String
        var cause: String
        var records: Int
    }

    var form: SearchForm
    var resultsHeading: String
    var rows: [Row]
    var hasRows: Bool
    var showAppColumn: Bool
    var pageLabel: String?
    var previousURL: String?
    var nextURL: String?

    /// `rows` of page `page` (from 1); `hasMore` when another page follows; `link(page)` builds the URL of a page
    /// with the same filters.
    public init(
        form: SearchForm, rows summaries: [NotificationSummary], page: Int, hasMore: Bool, showAppColumn: Bool, link: (Int) -> String
    ) {
        self.form = form
        rows = summaries.map { row in
            Row(
                firstSeen: UTCText.readable(row.firstTs), id: HTMLText.visible(row.notificationID),
                url: ConsoleURL.notification(row.notificationID, app: row.appID), app: HTMLText.visible(row.appID),
                category: HTMLText.visible(row.category ?? "–"), cause: row.cause ?? "not settled yet", records: row.records)
        }
        hasRows = !rows.isEmpty
        self.showAppColumn = showAppColumn
        resultsHeading = rows.isEmpty ? "Notifications" : "Notifications (\(rows.count) on this page)"
        pageLabel = page > 1 || hasMore ? "page \(page)" : nil
        previousURL = page > 1 ? link(page - 1) : nil
        nextURL = hasMore ? link(page + 1) : nil
    }
}
