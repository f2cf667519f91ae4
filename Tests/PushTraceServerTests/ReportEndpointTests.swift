import Foundation
import HTTPTypes
import HummingbirdTesting
import PushTraceServer
import PushTraceSimulator
import PushTraceTestSupport
import Testing

/// `GET /v1/reports/weekly`, `GET /v1/alerts`, and the `pushtrace_alert_firing` gauge.
@Suite struct ReportEndpointTests {
    @Test(arguments: TestEngine.all)
    func answersTheWeeklyReportAsJSONTextOrMarkdownWithinTheTokensApp(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        let bundles = server.folder.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: 3, notifications: 600), into: bundles)
        try server.folder.ingestFiles(in: bundles)
        try await server.run { client in
            let json = try await client.get("/v1/reports/weekly?week=2026-W46", token: server.readToken)
            #expect(json.status == .ok)
            #expect(json.json["app_id"] as? String == TestServer.app)
            #expect((json.json["notifications"] as? Int ?? 0) > 50)
            #expect(((json.json["previous"] as? [String: Any])?["period"] as? [String: Any])?["label"] as? String == "2026-W45")

            let text = try await client.get(
                "/v1/reports/weekly?app=\(TestServer.app)&week=2026-W46", token: server.adminToken,
                accept: "text/plain")
            #expect(text.text.hasPrefix("Delivery report: \(TestServer.app), 2026-W46"))
            let markdown = try await client.get(
                "/v1/reports/weekly?app=\(TestServer.app)&week=2026-W46", token: server.adminToken,
                accept: "text/markdown")
            #expect(markdown.text.hasPrefix("# Delivery report"))

            try expectError(
                try await client.get("/v1/reports/weekly?app=\(TestServer.otherApp)", token: server.readToken),
                .forbidden, "forbidden")
            // A token of every app that names none, with several apps stored: 400, naming them.
            let several = try await client.get("/v1/reports/weekly?week=2026-W46", token: server.adminToken)
            try expectError(several, .badRequest, "bad_request")
            #expect((several.json["message"] as? String)?.contains("this store holds 3: ") == true, "\(several.json)")
            try expectError(
                try await client.get("/v1/reports/weekly?app=x&week=2026-W99", token: server.adminToken),
                .badRequest, "bad_request")
            try expectError(try await client.get("/v1/reports/weekly?week=2026-W46", token: nil), .unauthorized, "unauthorized")
            try expectError(try await client.get("/v1/reports/weekly?week=2026-W46", token: server.ingestToken), .forbidden, "forbidden")
        }
    }

    @Test("a token of every app may leave app out while the store holds one app: the report is that app's", arguments: TestEngine.all)
    func impliesTheOnlyApp(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine)
        try server.folder.ingest([Lines.manifest(app: TestServer.app)] + Lines.sent("n-1"))
        try await server.run { client in
            let implied = try await client.get("/v1/reports/weekly?week=2026-W46", token: server.adminToken)
            #expect(implied.status == .ok && implied.json["app_id"] as? String == TestServer.app, "\(implied.json)")
        }
    }

    @Test(arguments: TestEngine.all)
    func evaluatesAlertsOnRequestAndEveryIntervalIntoTheFiringGauge(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine) { $0.alertInterval = .milliseconds(200) }
        // A week of runs at 3% timeouts, then an hour at 30%, ending now.
        let now = Int64(Date().timeIntervalSince1970 * 1000), hour: Int64 = 3_600_000
        var lines = [Lines.manifest(app: TestServer.app)]
        for index in 0..<1_000 {
            lines += Lines.serviceSteps("b-\(index)", at: now - hour - Int64(index + 1) * 7 * 24 * hour / 1_001, expired: index % 100 < 3)
        }
        for index in 0..<200 {
            lines += Lines.serviceSteps("w-\(index)", at: now - hour + Int64(index) * 15_000, expired: index < 60)
        }
        try server.folder.ingest(lines, receivedAt: now)
        try server.folder.store.settleCauses()
        try await server.run { client in
            let alerts = try await client.get("/v1/alerts", token: server.readToken)
            #expect(alerts.status == .ok)
            let firing = try #require(alerts.json["firing"] as? [[String: Any]])
            #expect(firing.map { $0["rule"] as? String } == ["service_timeout_spike"])
            #expect(firing.first?["category"] as? String == "DAILY_PICK")
            // Two hours earlier, nothing fired.
            let earlier = try await client.get("/v1/alerts?now=\(now - 2 * hour)", token: server.adminToken)
            #expect((earlier.json["firing"] as? [Any])?.isEmpty == true)

            var exposition = ""
            for _ in 0..<50 where !exposition.contains("pushtrace_alert_firing{") {
                try await Task.sleep(for: .milliseconds(100))
                exposition = try await client.get("/metrics", token: server.metricsToken).text
            }
            #expect(
                exposition.contains(
                    #"pushtrace_alert_firing{rule="service_timeout_spike",app="net.rorklab.dailypick",category="DAILY_PICK"} 1"#)
                    || exposition.contains(
                        #"pushtrace_alert_firing{app="net.rorklab.dailypick",category="DAILY_PICK",rule="service_timeout_spike"} 1"#),
                "\(exposition.split(separator: "\n").filter { $0.contains("alert") })")
            // Beside it, the rates an Alertmanager notification quotes. The monitor judges at its own moment, when the
            // window (the hour before it) may have slid past the first runs, so only what firing implies is held: the
            // window's rate well over the baseline's 3%.
            let rates = exposition.split(separator: "\n").filter { $0.hasPrefix("pushtrace_alert_") && $0.contains("_rate{") }
            let window = rates.first { $0.hasPrefix("pushtrace_alert_window_rate{") }.flatMap { Double($0.split(separator: " ").last!) }
            let baseline = rates.first { $0.hasPrefix("pushtrace_alert_baseline_rate{") }.flatMap { Double($0.split(separator: " ").last!) }
            #expect(abs((baseline ?? 0) - 0.03) < 0.01, "\(rates)")
            #expect((window ?? 0) > 2 * (baseline ?? 1), "\(rates)")
        }
    }

    @Test("the audience gauge: each app's devices of the last 7 days, by their latest notification settings", arguments: TestEngine.all)
    func exportsTheAudienceOfTheLastWeek(engine: TestEngine) async throws {
        let server = try await TestServer(engine: engine) { $0.alertInterval = .milliseconds(200) }
        let now = Int64(Date().timeIntervalSince1970 * 1000), day: Int64 = 86_400_000
        func settings(_ authorization: String, summary: String) -> String {
            #"{"type":"config","ts":\#(now - day),"process":"app","categories":[],"notification_settings":{"authorization":"\#(authorization)","scheduled_delivery":"\#(summary)"}}"#
        }
        try server.folder.ingest(
            [Lines.manifest(app: TestServer.app, device: "d-1"), settings("denied", summary: "disabled")], receivedAt: now)
        try server.folder.ingest(
            [Lines.manifest(app: TestServer.app, device: "d-2"), settings("authorized", summary: "enabled")], receivedAt: now)
        try server.folder.ingest(
            [Lines.manifest(app: TestServer.app, device: "d-3")] + Lines.serviceSteps("N-1", at: now - day, expired: false), receivedAt: now
        )
        try server.folder.store.settleCauses()
        try await server.run { client in
            var gauges: [String: Double] = [:]
            for _ in 0..<50 where gauges.isEmpty {
                try await Task.sleep(for: .milliseconds(100))
                for line in try await client.get("/metrics", token: server.metricsToken).text.split(separator: "\n")
                where line.hasPrefix("pushtrace_audience_devices{") && line.contains(#"app="\#(TestServer.app)""#) {
                    let group = line.split(separator: "group=\"")[1].prefix { $0 != "\"" }
                    gauges[String(group)] = Double(line.split(separator: " ").last!)
                }
            }
            #expect(
                gauges == [
                    "active": 3, "with_settings": 2, "notifications_disabled": 1, "provisional": 0, "scheduled_delivery": 1,
                    "time_sensitive_disabled": 0,
                ])
            // Without a metrics token, /metrics names no app.
            let anonymous = try await client.get("/metrics", token: nil).text
            #expect(!anonymous.contains("pushtrace_audience_devices"))
        }
    }
}
