import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing

@Suite("CLI: pushtrace alerts and report")
struct AlertsCLITests {
    /// 2026-11-15 12:00 UTC: the instant the alerts are evaluated at.
    static let now: Int64 = 1_794_744_000_000
    static let hour: Int64 = 3_600_000

    /// A bundle of service-extension runs of one app and category: `baseline` runs spread over the 7 days before
    /// the last hour (3% timing out), then `window` runs in the last hour, `windowTimeouts` of them timing out.
    static func runs(window: Int, windowTimeouts: Int, baseline: Int = 1_400) -> [String] {
        var lines = [
            #"{"type":"manifest","schema":1,"bundle_id":"\#(UUID().uuidString)","app_id":"net.rorklab.dailypick","device_id":"d-1"}"#
        ]
        func run(_ index: Int, at ts: Int64, expired: Bool) {
            let id = "n-\(index)"
            lines.append(
                #"{"type":"event","ts":\#(ts),"process":"service","event":"service.received","notification_id":"\#(id)","category":"DAILY_PICK"}"#
            )
            let end =
                expired
                ? #""event":"service.expired","notification_id":"\#(id)","elapsed_ms":29900"#
                : #""event":"service.delivered","notification_id":"\#(id)","elapsed_ms":700"#
            lines.append(#"{"type":"event","ts":\#(ts + (expired ? 29_900 : 700)),"process":"service",\#(end)}"#)
        }
        let baselineStart = now - hour - 7 * 24 * hour
        for index in 0..<baseline {
            run(index, at: baselineStart + Int64(index) * (7 * 24 * hour - hour) / Int64(baseline), expired: index % 100 < 3)
        }
        for index in 0..<window {
            run(baseline + index, at: now - hour + Int64(index) * (hour - 60_000) / Int64(window), expired: index < windowTimeouts)
        }
        return lines
    }

    static func alerts(window: Int, windowTimeouts: Int, extra: [String] = []) throws -> (Executable.Output, WorkFolder) {
        let work = try WorkFolder()
        try work.write("runs.ndjson", runs(window: window, windowTimeouts: windowTimeouts))
        let ingest = try work.run("ingest", "--received-at", "now", "runs.ndjson")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        return (try work.run(["alerts", "--now", "2026-11-15T12:00:00Z", "--format", "json"] + extra, environment: [:]), work)
    }

    @Test("a clear spike fires service_timeout_spike and exits 1")
    func spikeFires() throws {
        let (output, _) = try Self.alerts(window: 200, windowTimeouts: 60)
        #expect(output.status == 1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let firing = try #require(json["firing"] as? [[String: Any]])
        #expect(firing.count == 1)
        #expect(firing.first?["rule"] as? String == "service_timeout_spike")
        #expect(firing.first?["app_id"] as? String == "net.rorklab.dailypick")
        #expect(firing.first?["category"] as? String == "DAILY_PICK")
        #expect(firing.first?["window_rate"] as? Double == 0.3)
        #expect(firing.first?["baseline_rate"] as? Double == 42.0 / 1_400)
        #expect((firing.first?["text"] as? String)?.contains("30.0% (60 of 200)") == true)
    }

    @Test("--public-url links each firing alert to its notifications in the console; a URL that is none is refused")
    func publicURL() throws {
        let (json, work) = try Self.alerts(window: 200, windowTimeouts: 60, extra: ["--public-url", "https://push.example.com/"])
        let firing = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["firing"] as? [[String: Any]])
        let link =
            "https://push.example.com/ui/search?app=net.rorklab.dailypick&category=DAILY_PICK&cause=service_timeout"
            + "&since=2026-11-15T11%3A00%3A00Z&until=2026-11-15T12%3A00%3A00Z"
        #expect(firing.first?["console_url"] as? String == link)
        let text = try work.run(
            ["alerts", "--now", "2026-11-15T12:00:00Z"], environment: ["PUSHTRACE_PUBLIC_URL": "https://push.example.com"])
        #expect(text.status == 1)
        #expect(text.stdout.contains("\n  see \(link)\n"), "\(text.stdout)")
        let refused = try work.run(["alerts", "--public-url", "javascript:alert(1)"], environment: [:])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--public-url javascript:alert(1) is not an http:// or https:// URL"))
    }

    @Test("a steady rate a little above the baseline does not fire: exit 0")
    func steadyDoesNotFire() throws {
        let (output, _) = try Self.alerts(window: 200, windowTimeouts: 9)
        #expect(output.status == 0, "\(output.stdout)")
        #expect(output.stdout.contains(#""firing" : ["#))
        // Judged: the timeout and crash rules (200 runs each); nothing tried an attachment.
        #expect(output.stdout.contains(#""evaluated" : 2"#))
    }

    @Test("a window below the minimum volume does not fire, however high its rate: exit 0")
    func smallWindowDoesNotFire() throws {
        let (output, _) = try Self.alerts(window: 30, windowTimeouts: 25)
        #expect(output.status == 0, "\(output.stdout)")
        #expect(output.stdout.contains(#""evaluated" : 0"#))
        // The same window fires once the rules file lowers the minimum.
        let work = try WorkFolder()
        try work.write("runs.ndjson", Self.runs(window: 30, windowTimeouts: 25))
        try work.write("rules.yaml", ["rules:", "  - name: service_timeout_spike", "    min_window: 20"])
        _ = try work.run("ingest", "runs.ndjson")
        let lowered = try work.run("alerts", "--now", "2026-11-15T12:00:00Z", "--rules", "rules.yaml")
        #expect(lowered.status == 1)
        #expect(lowered.stdout.hasPrefix("FIRING service_timeout_spike: net.rorklab.dailypick / DAILY_PICK"))
    }

    @Test("records after --now are ignored")
    func afterNowIgnored() throws {
        let work = try WorkFolder()
        try work.write("runs.ndjson", Self.runs(window: 200, windowTimeouts: 60))
        _ = try work.run("ingest", "runs.ndjson")
        let before = try work.run("alerts", "--now", "2026-11-15T10:59:00Z")
        #expect(before.status == 0, "\(before.stdout)")
    }

    @Test("a rules file with a misspelt setting is refused, naming it: exit 2")
    func badRules() throws {
        let work = try WorkFolder()
        try work.write("runs.ndjson", Self.runs(window: 1, windowTimeouts: 0, baseline: 1))
        _ = try work.run("ingest", "runs.ndjson")
        try work.write("rules.yaml", ["rules:", "  - name: service_timeout_spike", "    min_windw: 20"])
        let output = try work.run("alerts", "--rules", "rules.yaml")
        #expect(output.status == 2)
        #expect(output.stderr.contains(#"rules[0].min_windw: unknown setting "min_windw""#))
    }

    @Test("--webhook posts the firing alerts with a text field, retrying after a 503")
    func webhook() async throws {
        let (received, attempts) = (NIOLockedValueBox<[String]>([]), NIOLockedValueBox(0))
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let attempt = attempts.withLockedValue {
                $0 += 1
                return $0
            }
            if attempt == 1 { return Response(status: .serviceUnavailable, headers: [.retryAfter: "0"]) }
            let body = try await request.body.collect(upTo: 1 << 20)
            received.withLockedValue { $0.append(String(buffer: body)) }
            return Response(status: .ok)
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let work = try WorkFolder()
        try work.write("runs.ndjson", Self.runs(window: 200, windowTimeouts: 60))
        _ = try work.run("ingest", "runs.ndjson")
        try await app.test(.live) { client in
            let output = try await work.runDetached([
                "alerts", "--now", "2026-11-15T12:00:00Z", "--webhook",
                "http://127.0.0.1:\(client.port!)/hook",
            ])
            #expect(output.status == 1, "\(output.stderr)")
            // The first attempt is answered 503; on a machine busy with the other suites the CLI may give up on
            // it first (its 10 s timeout). Either way it is retried, and the second attempt delivers.
            #expect(output.stderr.contains("answered 503") || output.stderr.contains("could not be reached"), "\(output.stderr)")
        }
        #expect(attempts.withLockedValue { $0 } == 2)
        let body = try #require(received.withLockedValue { $0.first })
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect((json["text"] as? String)?.contains("service_timeout_spike: net.rorklab.dailypick / DAILY_PICK") == true)
        #expect((json["firing"] as? [[String: Any]])?.count == 1)
    }

    @Test("report --format json and text through the executable; a bad --week says what is wrong")
    func report() throws {
        let work = try WorkFolder()
        _ = try work.run("simulate", "--out", "bundles", "--notifications", "600")
        _ = try work.run("ingest", "bundles")
        let json = try work.run("report", "--app", "io.acme.fitlog", "--week", "2026-W46", "--format", "json")
        #expect(json.status == 0, "\(json.stderr)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        for field in ["notifications", "causes", "service", "previous", "funnel", "attachments", "by_category", "actions"] {
            #expect(figures[field] != nil, "\(field)")
        }
        let service = try #require(figures["service"] as? [String: Any])
        for field in ["ran", "delivered", "timeouts", "timeout_rate", "duration_ms"] { #expect(service[field] != nil, "\(field)") }
        let text = try work.run("report", "--app", "io.acme.fitlog", "--week", "2026-W46")
        #expect(text.stdout.hasPrefix("Delivery report: io.acme.fitlog, 2026-W46 (2026-11-09 to 2026-11-15)"))
        let bad = try work.run("report", "--app", "io.acme.fitlog", "--week", "2026-46")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--week 2026-46 is not an ISO week"))
        let unknown = try work.run("report", "--app", "com.nope", "--week", "2026-W46")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no notifications of app com.nope"))
    }
}
