import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

@Suite("Core: report periods, percentiles and alert statistics")
struct ReportAndAlertTests {
    @Test("ISO weeks in UTC: Monday 00:00 starts one; week 53 and week 1 across a new year")
    func isoWeeks() throws {
        let week = try #require(ReportPeriod(isoWeek: "2026-W46"))
        #expect(ReportPeriod.dateText(week.start) == "2026-11-09")
        #expect(ReportPeriod.dateText(week.end) == "2026-11-16")
        #expect(week.previous.label == "2026-W45")
        #expect(ReportPeriod(weekContaining: week.end - 1).label == "2026-W46")
        #expect(ReportPeriod(weekContaining: week.end).label == "2026-W47")
        // 2026 has 53 ISO weeks (it starts on a Thursday); 2027-W01 starts on Monday 2027-01-04.
        #expect(ReportPeriod(isoWeek: "2026-W53") != nil)
        #expect(ReportPeriod(isoWeek: "2025-W53") == nil)
        #expect(ReportPeriod.dateText(try #require(ReportPeriod(isoWeek: "2027-W01")).start) == "2027-01-04")
        #expect(ReportPeriod(weekContaining: try #require(ReportPeriod(isoWeek: "2027-W01")).start - 1).label == "2026-W53")
        // 2024-12-30 is in 2025-W01.
        #expect(ReportPeriod.dateText(try #require(ReportPeriod(isoWeek: "2025-W01")).start) == "2024-12-30")
        for bad in ["2026-46", "2026-W00", "2026-W54", "26-W01", "2026-Wxx"] { #expect(ReportPeriod(isoWeek: bad) == nil, "\(bad)") }
        // Digits only, and the years stored times may have (openapi.json's pattern says the same).
        for bad in ["+123-W01", "-202-W01", "2026-W+1", "1999-W10", "2200-W01", "２０２６-W01"] {
            #expect(ReportPeriod(isoWeek: bad) == nil, "\(bad)")
        }
        #expect(ReportPeriod(isoWeek: "2026-w46")?.label == "2026-W46")
    }

    @Test("date ranges include both ends; the previous range is as long and just before")
    func dateRanges() throws {
        let range = try #require(ReportPeriod(from: "2026-11-01", to: "2026-11-14"))
        #expect(range.days.count == 14)
        #expect(range.previous.label == "2026-10-18..2026-10-31")
        #expect(ReportPeriod(from: "2026-11-14", to: "2026-11-01") == nil)
        #expect(ReportPeriod(from: "2026-02-29", to: "2026-03-01") == nil)
        #expect(ReportPeriod(from: "2028-02-29", to: "2028-03-01") != nil)
    }

    @Test("the audience counts each device's settings summary: what it cannot show, provisional, Summary, time-sensitive off")
    func audienceFigures() {
        let denied = NotificationSettings(authorization: .denied)
        let provisional = NotificationSettings(
            authorization: .provisional, alert: .enabled, lockScreen: .enabled, notificationCenter: .enabled,
            scheduledDelivery: .enabled, timeSensitive: .disabled)
        #expect(SettingsSummary(nil) == [] && SettingsSummary(NotificationSettings()) == [])
        #expect(SettingsSummary(denied) == [.recorded, .nothingShown])
        #expect(SettingsSummary(provisional) == [.recorded, .provisional, .scheduledDelivery, .timeSensitiveDisabled])
        var figures = AudienceFigures()
        figures.add(SettingsSummary(denied), devices: 3)
        figures.add(SettingsSummary(provisional), devices: 2)
        figures.add([], devices: 5)
        #expect(figures.devices == 10 && figures.withSettings == 5 && figures.notificationsDisabled == 3)
        #expect(figures.provisional == 2 && figures.scheduledDelivery == 2 && figures.timeSensitiveDisabled == 2)
        #expect(figures.disabledShare == 0.6 && AudienceFigures().disabledShare == nil)
    }

    @Test("percentiles are nearest-rank over a histogram")
    func percentiles() throws {
        // 1…100 once each: p50 = 50, p90 = 90, p99 = 99.
        let uniform = try #require(Percentiles((1...100).map { (Int64($0), 1) }))
        #expect((uniform.p50, uniform.p90, uniform.p99) == (50, 90, 99))
        // Ten values, one of them slow: nearest rank of p99 over 10 is the 10th.
        let skewed = try #require(Percentiles([(400, 9), (29_900, 1)]))
        #expect((skewed.p50, skewed.p90, skewed.p99) == (400, 400, 29_900))
        #expect(Percentiles([]) == nil)
    }

    @Test("the Wilson lower bound and the normal quantile")
    func statistics() {
        #expect(abs(Statistics.normalQuantile(0.99) - 2.3263) < 1e-4)
        #expect(abs(Statistics.normalQuantile(0.975) - 1.9600) < 1e-4)
        #expect(abs(Statistics.normalQuantile(0.5)) < 1e-9)
        // 60 of 200 at z = 2.326: (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n) ≈ 0.2307.
        #expect(abs(Statistics.wilsonLowerBound(successes: 60, trials: 200, z: 2.3263) - 0.2307) < 1e-3)
        #expect(Statistics.wilsonLowerBound(successes: 0, trials: 100, z: 2.3263) == 0)
    }

    @Test("alert rules: a clear rise fires; a small rise, a small window, and a single failure on a zero baseline do not")
    func evaluator() {
        let rule = AlertRule.builtIn[0]
        let spans = AlertSpans(rule: rule, now: 1_794_744_000_000)
        func sample(_ failures: Int, of total: Int, baseline: (Int, Int)) -> AlertSample {
            var window = RateCounts(), base = RateCounts()
            (window.serviceTimeouts, window.serviceRan) = (failures, total)
            (base.serviceTimeouts, base.serviceRan) = baseline
            return AlertSample(appID: "a", category: "C", window: window, baseline: base)
        }
        func fires(_ sample: AlertSample) -> Bool { !AlertEvaluator.evaluate(rule, samples: [sample], spans: spans).firing.isEmpty }
        #expect(fires(sample(60, of: 200, baseline: (42, 1_400))))
        #expect(!fires(sample(9, of: 200, baseline: (42, 1_400))))
        #expect(!fires(sample(40, of: 49, baseline: (42, 1_400))))
        #expect(!fires(sample(1, of: 60, baseline: (0, 1_400))))
        #expect(fires(sample(20, of: 60, baseline: (0, 0))))
    }

    @Test(
        "notifications_disabled_rise: a clear week-over-week rise fires; a small rise, few devices, or a share only now recorded do not"
    )
    func notificationsDisabledRise() throws {
        let rule = try #require(AlertRule.builtIn.first { $0.name == "notifications_disabled_rise" })
        #expect(rule.metric == .notificationsDisabled && rule.windowMinutes == 10_080 && rule.baselineDays == 7)
        let spans = AlertSpans(rule: rule, now: 1_794_744_000_000)
        func sample(_ disabled: Int, of devices: Int, baseline: (Int, Int)) -> AlertSample {
            var window = RateCounts(), base = RateCounts()
            (window.devicesDisabled, window.devicesWithSettings) = (disabled, devices)
            (base.devicesDisabled, base.devicesWithSettings) = baseline
            return AlertSample(appID: "a", category: "", window: window, baseline: base)
        }
        func evaluate(_ sample: AlertSample) -> (firing: [FiringAlert], judged: Int) {
            AlertEvaluator.evaluate(rule, samples: [sample], spans: spans)
        }
        let rise = evaluate(sample(60, of: 400, baseline: (20, 400)))
        #expect(rise.firing.count == 1)
        #expect(
            rise.firing.first?.text.hasPrefix(
                "notifications_disabled_rise: a: devices with notifications disabled 15.0% (60 of 400) in the 7 days to 2026-11-15 12:00:00 UTC, against 5.0% (20 of 400) over the 7 days before"
            ) == true, "\(rise.firing)")
        #expect(evaluate(sample(26, of: 400, baseline: (20, 400))).firing.isEmpty)
        #expect(evaluate(sample(20, of: 40, baseline: (2, 400))) == ([], 0))
        // Settings only start to be recorded (a new agent version): nothing to rise from.
        #expect(evaluate(sample(60, of: 400, baseline: (1, 10))) == ([], 0))
    }

    @Test("with nothing firing, the text says how many windows were judged, or that none had the volume")
    func quietText() {
        let now: Int64 = 1_794_744_000_000
        #expect(
            AlertReport(now: now, evaluated: 2, firing: []).text
                == "no alert fires as of 2026-11-15 12:00:00 UTC (2 rule, app and category windows judged)\n")
        #expect(AlertReport(now: now, evaluated: 1, firing: []).text.hasSuffix("(1 rule, app and category window judged)\n"))
        #expect(
            AlertReport(now: now, evaluated: 0, firing: []).text
                == "no alert fires as of 2026-11-15 12:00:00 UTC: no window had enough notifications to judge "
                + "(a rule's min_window) for any app and category\n")
    }

    @Test("a rules file changes built-in rules, adds new ones, and names what is wrong")
    func ruleFile() throws {
        let set = try AlertRuleSet(
            yaml: """
                rules:
                  - name: service_timeout_spike
                    min_window: 100
                  - name: extension_crash_spike
                    enabled: false
                  - name: fast_timeouts
                    metric: service_timeout
                    window_minutes: 15
                """)
        #expect(set.rules.first { $0.name == "service_timeout_spike" }?.minWindow == 100)
        #expect(
            set.active.map(\.name) == ["service_timeout_spike", "attachment_failure_spike", "notifications_disabled_rise", "fast_timeouts"])
        #expect(set.rules.last?.windowMinutes == 15)
        #expect(throws: AlertConfigError.self) { try AlertRuleSet(yaml: "rules:\n  - name: x\n") }
        do {
            _ = try AlertRuleSet(yaml: "rules:\n  - name: service_timeout_spike\n    confidence: 2\n")
            Issue.record("confidence 2 was accepted")
        } catch let error as AlertConfigError {
            #expect(error.message.contains("confidence must be between 0.5 and 1"))
        }
    }
}
