import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

@testable import PushTraceConsole

/// The console's pieces without a server: escaping, links, times, charts, every template rendering.
@Suite struct ConsoleRenderingTests {
    static let hostile = "<b onmouseover=\"x\">&'\u{1B}[31m\u{202E}evil \u{600}<i> \"\u{301} x=\u{600}<meta http-equiv=refresh>"

    /// A quote joined to a combining accent: one grapheme cluster.
    static let quoteWithAccent = "\"" + "\u{301}"

    /// Whether `text`'s UTF-8 holds `part`'s: String's own `contains` compares grapheme clusters, which is the very
    /// thing a joining mark hides `<` in.
    static func bytes(_ text: String, contain part: String) -> Bool {
        let haystack = Array(text.utf8), needle = Array(part.utf8)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    @Test func escapesTextAndShowsHiddenCharacters() {
        #expect(HTMLText.escaped("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
        let safe = HTMLText.safe(Self.hostile)
        #expect(!safe.contains("<"))
        #expect(!safe.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
        #expect(safe.contains("\\u{202E}"))
    }

    @Test func linksEncodeEveryValue() {
        #expect(ConsoleURL.component("a b/é?&") == "a%20b%2F%C3%A9%3F%26")
        #expect(ConsoleURL.notification("id/1", app: "net.x") == "/ui/notifications/id%2F1?app=net.x")
        #expect(ConsoleURL.link("/ui/search", [("cause", "ok"), ("app", nil)]) == "/ui/search?cause=ok")
    }

    @Test func writesTimesInUTC() {
        #expect(UTCText.iso(1_763_622_000_000) == "2025-11-20T07:00:00Z")
        #expect(UTCText.readable(0) == "1970-01-01 00:00:00")
        #expect(UTCText.iso(-1) == "1969-12-31T23:59:59Z")
        #expect(UTCText.readable(nil) == "–")
    }

    @Test func publicURLsAreCheckedAndLinkAlerts() {
        #expect(PublicURL("https://push.example.com/")?.base == "https://push.example.com")
        #expect(PublicURL("ftp://push.example.com") == nil)
        #expect(PublicURL("https://push.example.com/?q=1") == nil)
        #expect(PublicURL("https://push.example.com/\"><script>") == nil)
        #expect(PublicURL("https://") == nil)
    }

    @Test func chartsEscapeTheirLabelsAndDescribeThemselves() {
        let chart = BarChart(
            id: "c", title: "Causes", rows: [BarChart.Row(label: Self.hostile, value: 3, before: 1, valueText: "3", beforeText: "1")],
            legend: (now: "2026-W47", before: "2026-W46"))
        let svg = chart.svg
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("role=\"img\""))
        #expect(svg.contains("<desc id=\"c-desc\">"))
        #expect(svg.contains("2026-W46 1"))
        #expect(!svg.contains("<b "))
        #expect(!svg.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
    }

    @Test func theWaterfallHasALanePerProcess() throws {
        let lines = [
            #"{"type":"event","ts":1000,"process":"server","event":"push.sent","notification_id":"n"}"#,
            #"{"type":"event","ts":1800,"process":"service","event":"service.received","notification_id":"n"}"#,
            #"{"type":"event","ts":2200,"process":"service","event":"service.delivered","notification_id":"n","elapsed_ms":400}"#,
        ]
        let entries = try zip([1000, 1800, 2200] as [Int64], lines).map { at, line in
            let ts = 1_763_622_000_000 + at
            return TimelineEntry(ts: ts, record: try JSONDecoder().decode(Record.self, from: Data(line.utf8)), json: line)
        }
        let svg = Waterfall(timeline: entries).svg
        for lane in ["server", "service", "content", "app"] { #expect(svg.contains(">\(lane)</text>")) }
        #expect(svg.contains("class=\"span\""))
        #expect(svg.contains("3 records over 1.2 s"))
        #expect(Waterfall.duration(125_000) == "2 min 5 s")
    }

    @Test func everyPageRendersInsideTheLayout() {
        let pages = ConsolePages()
        let frame = PageFrame(title: Self.hostile, viewer: "read token abc for \(Self.hostile)", app: "net.x", section: .search)
        let report = AlertReport(now: 1_763_622_000_000, evaluated: 0, firing: [])
        let rendered = [
            pages.login(message: Self.hostile),
            pages.error(ErrorPage(heading: "Not found", message: Self.hostile), frame: frame),
            pages.alerts(AlertsPage(report: report), frame: frame),
            pages.search(
                SearchPage(form: SearchForm(category: Self.hostile, showApp: true), rows: [], page: 1, hasMore: false, showAppColumn: true)
                { _ in "" },
                frame: frame),
            pages.overview(
                OverviewPage(app: "net.x", counts: [], since: 0, alerts: report, form: SearchForm(showApp: false)), frame: frame),
        ]
        for page in rendered {
            #expect(page.hasPrefix("<!DOCTYPE html>"))
            #expect(page.contains("<main id=\"main\">"))
            #expect(!page.contains("<b onmouseover"))
            // A mark that joins the next character into one grapheme cluster must not carry `<` or `"` past the
            // escaping (Mustache's own escapes by Character).
            #expect(!Self.bytes(page, contain: "<meta http-equiv"))
            #expect(!Self.bytes(page, contain: "<i>"))
            let joined = Self.bytes(page, contain: Self.quoteWithAccent)
            #expect(!joined)
            #expect(!page.contains("<script>"), "no inline script")
            #expect(!page.contains("style="), "no inline style")
            #expect(!page.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
        }
    }
}
