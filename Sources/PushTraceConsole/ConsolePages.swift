import Mustache
import PushTraceRecords

/// Renders the console's pages (docs/console.md): each page's model through its Mustache template, inside the
/// layout. Mustache escapes every value it substitutes; the models hold stored text already made visible
/// (``HTMLText/visible(_:)``), and the charts are escaped where they are drawn.
public struct ConsolePages: Sendable {
    private let library: MustacheLibrary

    /// The templates compiled into the binary; a template that does not parse is a programming error, caught by the
    /// tests that render every page.
    public init() {
        // Every template names this content type: Mustache's own HTML escaping looks characters up one grapheme
        // cluster at a time, so a `<` or `"` joined to a combining or prepended mark would pass through raw.
        MustacheContentTypes.register(ScalarHTML(), named: ScalarHTML.name)
        var templates: [String: MustacheTemplate] = [:]
        let sources: [(String, [UInt8])] = [
            ("layout", PackageResources.layout_mustache), ("login", PackageResources.login_mustache),
            ("error", PackageResources.error_mustache), ("overview", PackageResources.overview_mustache),
            ("alertList", PackageResources.alertList_mustache), ("searchForm", PackageResources.searchForm_mustache),
            ("search", PackageResources.search_mustache), ("notification", PackageResources.notification_mustache),
            ("report", PackageResources.report_mustache), ("alerts", PackageResources.alerts_mustache),
        ]
        for (name, bytes) in sources {
            do {
                templates[name] = try MustacheTemplate(string: String(decoding: bytes, as: UTF8.self))
            } catch {
                preconditionFailure("console template \(name) does not parse: \(error)")
            }
        }
        library = MustacheLibrary(templates: templates)
    }

    /// A whole page: `model` through the template `name`, inside the layout described by `frame`.
    public func render(_ name: String, _ model: Any, frame: PageFrame) -> String {
        var layout = frame.layout
        layout.content = library.render(model, withTemplate: name) ?? ""
        return library.render(layout, withTemplate: "layout") ?? ""
    }

    public func login(message: String?) -> String {
        render("login", LoginModel(message: message.map(HTMLText.visible)), frame: PageFrame(title: "Sign in", viewer: nil))
    }

    public func error(_ page: ErrorPage, frame: PageFrame) -> String {
        render("error", page, frame: frame)
    }

    public func overview(_ page: OverviewPage, frame: PageFrame) -> String { render("overview", page, frame: frame) }
    public func search(_ page: SearchPage, frame: PageFrame) -> String { render("search", page, frame: frame) }
    public func notification(_ page: NotificationPage, frame: PageFrame) -> String {
        var frame = frame
        frame.follows = page.follow
        return render("notification", page, frame: frame)
    }
    public func report(_ page: ReportPage, frame: PageFrame) -> String { render("report", page, frame: frame) }
    public func alerts(_ page: AlertsPage, frame: PageFrame) -> String { render("alerts", page, frame: frame) }
}

/// HTML escaping one Unicode scalar at a time (``HTMLText/escaped(_:)``), as the templates' content type.
struct ScalarHTML: MustacheContentType {
    static let name = "PUSHTRACE_HTML"

    func escapeText(_ text: String) -> String { HTMLText.escaped(text) }
}

struct LoginModel {
    var message: String?
}

/// What every page's layout says: its title, who is signed in, which part of the console it is.
public struct PageFrame: Sendable {
    /// The part of the console a page belongs to, marked current in the navigation.
    public enum Section: Sendable { case overview, search, report, alerts, other }

    public var title: String
    /// Who is signed in, as the header shows it (`read token 3f2a… for net.example.app`); nil on the sign-in page.
    public var viewer: String?
    /// The app the viewer reads, carried into the report link.
    public var app: String?
    public var section: Section
    /// Whether the page loads the live-follow script.
    public var follows = false

    public init(title: String, viewer: String?, app: String? = nil, section: Section = .other) {
        self.title = title
        self.viewer = viewer
        self.app = app
        self.section = section
    }

    struct Layout {
        var title: String
        var signedIn: Bool
        var scope: String
        var appQuery: String
        var overviewCurrent: Bool
        var searchCurrent: Bool
        var reportCurrent: Bool
        var alertsCurrent: Bool
        var follows: Bool
        var version: String
        var content = ""
    }

    var layout: Layout {
        Layout(
            title: HTMLText.visible(title), signedIn: viewer != nil, scope: HTMLText.visible(viewer ?? ""),
            appQuery: app.map { "?app=" + ConsoleURL.component($0) } ?? "",
            overviewCurrent: section == .overview, searchCurrent: section == .search,
            reportCurrent: section == .report, alertsCurrent: section == .alerts, follows: follows,
            version: PushTraceVersion.release)
    }
}

/// Builds the console's links: every value percent-encoded, so that stored text never shapes a URL.
public enum ConsoleURL {
    /// `value` encoded for a path segment or a query value.
    public static func component(_ value: String) -> String {
        var allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~".unicodeScalars.map { $0 }
        allowed.reserveCapacity(66)
        var out = ""
        for byte in value.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 128, allowed.contains(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }

    /// `path` with the query items that have a value, in the order given.
    public static func link(_ path: String, _ items: [(String, String?)]) -> String {
        let query = items.compactMap { name, value in value.map { "\(name)=\(component($0))" } }
        return query.isEmpty ? path : path + "?" + query.joined(separator: "&")
    }

    /// The page of one notification.
    public static func notification(_ id: String, app: String?) -> String {
        link("/ui/notifications/" + component(id), [("app", app)])
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
