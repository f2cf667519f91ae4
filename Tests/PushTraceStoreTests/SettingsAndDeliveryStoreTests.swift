import Foundation
import PushTraceCore
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

/// The user's settings and APNs's delivery rules read from a real store (docs/protocol.md#causes): the settings in
/// force from the device's config records, the device's later notifications from the summaries, on both engines;
/// and settling answers as `why` does.
@Suite("Settings and APNs's delivery rules, from the store")
struct SettingsAndDeliveryStoreTests {
    static let t0 = Lines.t0

    static func settings(at: Int64, _ authorization: String, summary: String = "disabled") -> String {
        #"{"type":"config","ts":\#(at),"process":"app","app_group":"group.a","categories":[{"id":"DAILY_PICK","actions":[]}],"notification_settings":{"authorization":"\#(authorization)","alert":"enabled","lock_screen":"enabled","notification_center":"enabled","alert_style":"banner","scheduled_delivery":"\#(summary)","time_sensitive":"enabled"}}"#
    }

    static func sent(_ id: String, at: Int64, extra: String = "") -> [String] {
        Lines.sent(id, at: at).enumerated().map { index, line in
            index == 0 ? String(line.dropLast()) + extra + "}" : line
        }
    }

    static func received(_ id: String, at: Int64) -> String {
        #"{"type":"event","ts":\#(at),"process":"service","event":"service.received","notification_id":"\#(id)","category":"DAILY_PICK"}"#
    }

    static func log(at: Int64) -> String {
        #"{"type":"log","ts":\#(at),"process":"app","level":"info","message":"launched"}"#
    }

    func check(_ temporary: TemporaryStore, _ expected: [String: Cause], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        _ = try temporary.store.settleCauses()
        for (id, cause) in expected {
            let why = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: id)
            #expect(why.diagnosis.cause == cause, "\(id)", sourceLocation: sourceLocation)
        }
        let (_, mismatches) = try await SettleFromSummaryTests.compare(temporary.store)
        #expect(mismatches.isEmpty, "\(mismatches)", sourceLocation: sourceLocation)
    }

    @Test("notifications turned off before the push: notifications_disabled; turned off after it: not_delivered", arguments: TestEngine.all)
    func notificationsDisabled(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest(device: nil)] + Self.sent("N-1", at: Self.t0) + Self.sent("N-2", at: Self.t0 + 600_000))
        try temporary.ingest([
            Lines.manifest(), Self.settings(at: Self.t0 - 3_600_000, "authorized"),
            Self.settings(at: Self.t0 - 60_000, "denied"), Self.settings(at: Self.t0 - 30_000, "denied"),
            Self.settings(at: Self.t0 + 300_000, "authorized"),
            Self.log(at: Self.t0 + 7_200_000),
        ])
        try await check(temporary, ["N-1": .notificationsDisabled, "N-2": .notDelivered])
        // The report's audience: the device, its latest settings at the week's end (authorized again).
        let audience = try await temporary.store.report(appID: "net.rorklab.dailypick", period: ReportPeriod(weekContaining: Self.t0))
            .figures.audience
        #expect(audience.devices == 1 && audience.withSettings == 1 && audience.notificationsDisabled == 0)
        try temporary.ingest([Lines.manifest(), Self.settings(at: Self.t0 + 600_000, "denied", summary: "enabled")])
        let later = try await temporary.store.report(appID: "net.rorklab.dailypick", period: ReportPeriod(weekContaining: Self.t0))
            .figures.audience
        #expect(later.notificationsDisabled == 1 && later.scheduledDelivery == 1 && later.provisional == 0)
        let finding = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "N-1").diagnosis.findings[0]
        #expect(finding.message.contains("authorization denied"))
        // Since the first record that said so, not the latest.
        #expect(finding.message.contains("since 2025-11-20 06:59:00 UTC"))
    }

    @Test("Notification Summary on: a delivered push never expanded is held_for_summary", arguments: TestEngine.all)
    func heldForSummary(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest(device: nil)] + Self.sent("N-1", at: Self.t0))
        try temporary.ingest([
            Lines.manifest(), Self.settings(at: Self.t0 - 60_000, "authorized", summary: "enabled"),
            Self.received("N-1", at: Self.t0 + 800),
        ])
        try await check(temporary, ["N-1": .heldForSummary])
    }

    @Test("apns-expiration 0, and a later push kept instead while the device was offline", arguments: TestEngine.all)
    func expiredAndCoalesced(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest(
            [Lines.manifest(device: nil)] + Self.sent("N-1", at: Self.t0, extra: #","expiration":0"#)
                + Self.sent("N-2", at: Self.t0 + 60_000, extra: #","expiration":\#((Self.t0 + 86_400_000) / 1000)"#)
                + Self.sent("N-3", at: Self.t0 + 1_800_000))
        // The device comes back an hour later and records only the last push.
        try temporary.ingest([
            Lines.manifest(), Self.received("N-3", at: Self.t0 + 3_600_000), Self.log(at: Self.t0 + 7_200_000),
        ])
        try await check(temporary, ["N-1": .expiredUndelivered, "N-2": .coalescedOffline, "N-3": .notExpanded])
        let why = try await temporary.store.why(appID: "net.rorklab.dailypick", notificationID: "N-2")
        #expect(why.diagnosis.findings[0].related == "N-3")
        #expect(why.jsonValue.jsonText(pretty: false).contains(#""related_notification_id":"N-3""#))
    }

    @Test(
        "a push settled not_delivered is settled again as coalesced_offline when the one APNs kept arrives in a later upload",
        arguments: TestEngine.all)
    func coalescedLater(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest(
            [Lines.manifest(device: nil)]
                + Self.sent("N-2", at: Self.t0 + 60_000, extra: #","expiration":\#((Self.t0 + 86_400_000) / 1000)"#)
                + Self.sent("N-3", at: Self.t0 + 1_800_000))
        // The device is back an hour later; the service extension's record of the push kept comes in its next upload.
        try temporary.ingest([Lines.manifest(), Self.log(at: Self.t0 + 3_600_000)])
        try await check(temporary, ["N-2": .notDelivered, "N-3": .notDelivered])
        try temporary.ingest([Lines.manifest(), Self.received("N-3", at: Self.t0 + 3_500_000)])
        try await check(temporary, ["N-2": .coalescedOffline, "N-3": .notExpanded])
        let counts = try await temporary.store.report(appID: "net.rorklab.dailypick", period: ReportPeriod(weekContaining: Self.t0)).figures
            .causes
        #expect(counts["coalesced_offline"] == 1 && counts["not_expanded"] == 1 && counts["not_delivered"] == nil)
    }

    @Test("a later push with the same collapse ID reached the device: replaced", arguments: TestEngine.all)
    func replaced(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let collapse = #","collapse_id":"score-42""#
        try temporary.ingest(
            [Lines.manifest(device: nil)] + Self.sent("N-1", at: Self.t0, extra: collapse)
                + Self.sent("N-2", at: Self.t0 + 600_000, extra: collapse))
        try temporary.ingest([
            Lines.manifest(), Self.received("N-1", at: Self.t0 + 800), Self.received("N-2", at: Self.t0 + 600_800),
        ])
        try await check(temporary, ["N-1": .replaced, "N-2": .notExpanded])
    }

    @Test(
        "a notification settled not_expanded is settled again as replaced when the later one reaches the device", arguments: TestEngine.all)
    func replacedLater(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let collapse = #","collapse_id":"score-42""#
        try temporary.ingest([Lines.manifest(device: nil)] + Self.sent("N-1", at: Self.t0, extra: collapse))
        try temporary.ingest([Lines.manifest(), Self.received("N-1", at: Self.t0 + 800)])
        try await check(temporary, ["N-1": .notExpanded])
        try temporary.ingest([Lines.manifest(device: nil)] + Self.sent("N-2", at: Self.t0 + 600_000, extra: collapse))
        try temporary.ingest([Lines.manifest(), Self.received("N-2", at: Self.t0 + 600_800)])
        try await check(temporary, ["N-1": .replaced, "N-2": .notExpanded])
        // The report counts it once, under its new cause.
        let counts = try await temporary.store.report(appID: "net.rorklab.dailypick", period: ReportPeriod(weekContaining: Self.t0)).figures
            .causes
        #expect(counts["replaced"] == 1 && counts["not_expanded"] == 1)
    }

    @Test("notifications_disabled_rise: more devices turned notifications off this week than the week before", arguments: TestEngine.all)
    func notificationsDisabledRise(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let day: Int64 = 86_400_000
        // 60 devices record their settings three days before t0 (3 of them denied) and three days after (20).
        for device in 0..<60 {
            try temporary.ingest([
                Lines.manifest(device: "d-\(device)"), Self.settings(at: Self.t0 - 3 * day, device < 3 ? "denied" : "authorized"),
                Self.settings(at: Self.t0 + 3 * day, device < 20 ? "denied" : "authorized"),
            ])
        }
        // Another app's ten devices, all denied: too few to judge, and not this app's.
        for device in 0..<10 {
            try temporary.ingest([
                Lines.manifest(app: "net.rorklab.other", device: "o-\(device)"), Self.settings(at: Self.t0 + 3 * day, "denied"),
            ])
        }
        try temporary.ingest([Lines.manifest(device: nil)] + Self.sent("N-1", at: Self.t0))
        try temporary.ingest([Lines.manifest(app: "net.rorklab.other", device: nil)] + Self.sent("N-1", at: Self.t0))
        _ = try temporary.store.settleCauses()
        let rules = AlertRule.builtIn.filter { $0.metric == .notificationsDisabled }
        let report = try await temporary.store.alerts(rules, now: Self.t0 + 7 * day)
        #expect(report.evaluated == 1)
        let alert = try #require(report.firing.first)
        #expect(alert.appID == "net.rorklab.dailypick" && alert.category == "")
        #expect((alert.windowFailures, alert.windowTotal, alert.baselineFailures, alert.baselineTotal) == (20, 60, 3, 60))
        #expect(try await temporary.store.alerts(rules, now: Self.t0 + 7 * day, appID: "net.rorklab.other").evaluated == 0)
        // A week before, the share had not risen.
        #expect(try await temporary.store.alerts(rules, now: Self.t0).firing.isEmpty)
        let audiences = try await temporary.store.audiences(period: ReportPeriod(label: "week", start: Self.t0, end: Self.t0 + 7 * day))
        #expect(audiences["net.rorklab.dailypick"]?.notificationsDisabled == 20 && audiences["net.rorklab.other"]?.devices == 10)
    }

    @Test(
        "the audience counts each device by its settings at the period's end, whatever order its records arrived in",
        arguments: TestEngine.all)
    func audienceOutOfOrder(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let hour: Int64 = 3_600_000
        // The device's settings over eight hours, each record uploaded in a bundle of its own, out of order; then a
        // config record without settings, which changes nothing.
        let denied = [false, false, true, true, true, false, true, true]
        for k in [5, 0, 7, 2, 6, 1, 4, 3] {
            try temporary.ingest([Lines.manifest(), Self.settings(at: Self.t0 + Int64(k) * hour, denied[k] ? "denied" : "authorized")])
        }
        try temporary.ingest([
            Lines.manifest(), #"{"type":"config","ts":\#(Self.t0 + 8 * hour),"process":"app","app_group":"group.a","categories":[]}"#,
        ])
        for k in 0...8 {
            let period = ReportPeriod(label: "hour \(k)", start: Self.t0 - 86_400_000, end: Self.t0 + Int64(k) * hour + 1)
            let audience = try await temporary.store.report(appID: "net.rorklab.dailypick", period: period).figures.audience
            #expect(audience.devices == 1 && audience.withSettings == 1, "hour \(k): \(audience)")
            #expect(audience.notificationsDisabled == (denied[min(k, 7)] ? 1 : 0), "hour \(k): \(audience)")
        }
    }
}
