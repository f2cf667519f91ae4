import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

extension Story {
    /// The app's config record, recorded `at` (relative to the push), carrying these notification settings.
    mutating func settings(_ fields: [String: JSONValue], at: Int64 = -3_600_000) {
        var object = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(config.app!.json.utf8))) ?? [:]
        for key in ["type", "ts", "process"] { object[key] = nil }
        object["notification_settings"] = .object(fields)
        config.app = Story.entry(at, "app", "config", object)
    }

    static let allowed: [String: JSONValue] = [
        "authorization": "authorized", "alert": "enabled", "lock_screen": "enabled", "notification_center": "enabled",
        "alert_style": "banner", "scheduled_delivery": "disabled", "time_sensitive": "enabled",
    ]

    static func allowed(_ changes: [String: JSONValue]) -> [String: JSONValue] {
        allowed.merging(changes) { $1 }
    }

    /// Delivered, never expanded: the content extension's records removed.
    mutating func notExpanded() {
        for event in ["content.received", "content.image", "shared.write", "content.action"] { remove(event) }
    }

    /// A push APNs accepted that device d-1 never recorded, though it uploaded records two hours later.
    static var undelivered: Story {
        var s = Story.healthy
        s.serverOnly()
        s.deviceLastSeen = t0 + 7_200_000
        return s
    }

    /// As ``undelivered``, sent with an apns-expiration a day ahead: APNs stored it for the device.
    static var undeliveredStored: Story {
        var s = Story.healthy
        s.serverOnly()
        s.change("push.sent", ["expiration": .int((t0 + 86_400_000) / 1000)])
        s.deviceLastSeen = t0 + 7_200_000
        return s
    }

    static func neighbour(_ id: String, sent: Int64, reached: Int64, collapse: String? = nil) -> DeviceNeighbours.Neighbour {
        DeviceNeighbours.Neighbour(notificationID: id, sentTs: t0 + sent, collapseID: collapse, reachedTs: t0 + reached)
    }
}

@Suite("Diagnosis: the user's settings and APNs's delivery rules (docs/protocol.md)")
struct SettingsAndDeliveryRulesTests {
    @Test("notifications turned off: notifications_disabled, naming the setting and since when")
    func notificationsDisabled() {
        var s = Story.undelivered
        s.settings(Story.allowed(["authorization": "denied"]))
        let d = s.diagnosis
        #expect(d.cause == .notificationsDisabled)
        #expect(d.findings[0].message.contains("authorization denied"))
        #expect(d.findings[0].message.contains("since"))
        #expect(d.findings[0].evidence.first?.record.notificationSettings?.authorization == "denied")
        #expect(d.findings[0].fix.contains("openNotificationSettingsURLString"))
        // The push itself was not delivered: said too, below.
        #expect(d.findings.map(\.code).contains(.notDelivered))
    }

    @Test("alerts, Lock Screen and Notification Center all off is notifications_disabled; one of them on is not")
    func everyPlaceOff() {
        var s = Story.undelivered
        s.settings(Story.allowed(["alert": "disabled", "lock_screen": "disabled", "notification_center": "disabled"]))
        #expect(s.diagnosis.cause == .notificationsDisabled)
        s.settings(Story.allowed(["alert": "disabled", "lock_screen": "disabled"]))
        #expect(s.diagnosis.cause == .notDelivered)
    }

    @Test("settings recorded after the push are not in force")
    func settingsAfterThePush() {
        var s = Story.undelivered
        s.settings(Story.allowed(["authorization": "denied"]), at: 60_000)
        let denied = s.config.app!
        s.settings(Story.allowed, at: -7_200_000)
        let allowed = s.config.app!
        #expect(SettingsInForce(history: [allowed, denied], at: Story.t0)?.entry == allowed)
        #expect(SettingsInForce(history: [denied], at: Story.t0) == nil)
        // In force: the run of records that say the same since when.
        s.settings(Story.allowed(["authorization": "denied"]), at: -60_000)
        let deniedBefore = s.config.app!
        s.settings(Story.allowed(["authorization": "denied"]), at: -600_000)
        let deniedFirst = s.config.app!
        let inForce = SettingsInForce(history: [allowed, deniedFirst, deniedBefore, denied], at: Story.t0)
        #expect(inForce?.entry == deniedBefore && inForce?.disabledSince == deniedFirst)
    }

    @Test("a device that shows the notification despite a denied record is not notifications_disabled")
    func shownDespiteDenied() {
        var s = Story.healthy
        s.settings(Story.allowed(["authorization": "denied"]))
        #expect(s.diagnosis.cause == .ok)
    }

    @Test("provisional authorization, alert style None, or a passive push: delivered_quietly")
    func deliveredQuietly() {
        for (settings, level) in [
            (Story.allowed(["authorization": "provisional"]), nil),
            (Story.allowed(["alert_style": "none"]), nil),
            (Story.allowed, "passive" as JSONValue?),
        ] {
            var s = Story.healthy
            s.notExpanded()
            s.settings(settings)
            if let level { s.change("push.sent", ["interruption_level": level]) }
            let d = s.diagnosis
            #expect(d.cause == .deliveredQuietly, "\(settings) \(String(describing: level))")
            #expect(!d.findings.map(\.code).contains(.notExpanded))
        }
    }

    @Test("the service extension's level wins over the push's")
    func deliveredLevelWins() {
        var s = Story.healthy
        s.notExpanded()
        s.change("push.sent", ["interruption_level": "passive"])
        s.change("service.delivered", ["interruption_level": "active"])
        #expect(s.diagnosis.cause == .notExpanded)
        s.change("push.sent", ["interruption_level": "active"])
        s.change("service.delivered", ["interruption_level": "passive"])
        #expect(s.diagnosis.cause == .deliveredQuietly)
        #expect(s.diagnosis.findings[0].evidence.first?.record.event == "service.delivered")
    }

    @Test("Notification Summary holds an active push: held_for_summary")
    func heldForSummary() {
        var s = Story.healthy
        s.notExpanded()
        s.settings(Story.allowed(["scheduled_delivery": "enabled"]))
        let d = s.diagnosis
        #expect(d.cause == .heldForSummary)
        #expect(!d.findings.map(\.code).contains(.timeSensitiveOff))
    }

    @Test("a time-sensitive push with time_sensitive enabled under Summary is not_expanded, not held")
    func timeSensitiveBreaksThrough() {
        var s = Story.healthy
        s.notExpanded()
        s.settings(Story.allowed(["scheduled_delivery": "enabled"]))
        s.change("push.sent", ["interruption_level": "time-sensitive"])
        #expect(s.diagnosis.cause == .notExpanded)
    }

    @Test("a time-sensitive push with time_sensitive disabled under Summary is held, with time_sensitive_off")
    func timeSensitiveOff() {
        var s = Story.healthy
        s.notExpanded()
        s.settings(Story.allowed(["scheduled_delivery": "enabled", "time_sensitive": "disabled"]))
        s.change("push.sent", ["interruption_level": "time-sensitive"])
        let d = s.diagnosis
        #expect(d.cause == .heldForSummary)
        #expect(d.findings.map(\.code) == [.heldForSummary, .timeSensitiveOff])
    }

    @Test("an expanded notification is ok, whatever the settings")
    func expandedIsOK() {
        var s = Story.healthy
        s.settings(Story.allowed(["scheduled_delivery": "enabled", "authorization": "provisional"]))
        #expect(s.diagnosis.cause == .ok)
    }

    @Test("apns-expiration 0 and a device that could not be reached: expired_undelivered")
    func expiredNowOrNever() {
        var s = Story.undelivered
        s.change("push.sent", ["expiration": 0])
        let d = s.diagnosis
        #expect(d.cause == .expiredUndelivered)
        #expect(d.findings[0].message.contains("now or never"))
        #expect(!d.findings.map(\.code).contains(.notDelivered))
    }

    @Test("an expiration before the device's first record after the push: expired_undelivered")
    func expiredBeforeTheDeviceCameBack() {
        var s = Story.undelivered
        s.change("push.sent", ["expiration": .int((Story.t0 + 600_000) / 1000)])
        s.neighbours = DeviceNeighbours(firstRecordAfterSent: Story.t0 + 3_600_000, laterReached: [])
        #expect(s.diagnosis.cause == .expiredUndelivered)
    }

    @Test("expiration in the future with the device back before it is not_delivered, not expired")
    func deviceBackBeforeExpiration() {
        var s = Story.undelivered
        s.change("push.sent", ["expiration": .int((Story.t0 + 86_400_000) / 1000)])
        s.neighbours = DeviceNeighbours(firstRecordAfterSent: Story.t0 + 3_600_000, laterReached: [])
        #expect(s.diagnosis.cause == .notDelivered)
        // And nothing known of the device's return: nothing said of expiry.
        s.neighbours = nil
        #expect(s.diagnosis.cause == .notDelivered)
    }

    @Test("a later push the device recorded, sent before it recorded anything else: coalesced_offline, naming it")
    func coalescedOffline() {
        var s = Story.undeliveredStored
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: nil, laterReached: [Story.neighbour("n-2", sent: 1_800_000, reached: 3_600_000)])
        let d = s.diagnosis
        #expect(d.cause == .coalescedOffline)
        #expect(d.findings[0].related == "n-2")
        #expect(d.findings[0].message.contains("n-2"))
        // A push whose expiration the backend did not report: whether APNs stored it is unknown.
        s.change("push.sent", ["expiration": .null])
        #expect(s.diagnosis.cause == .notDelivered)
    }

    @Test("the other notification of a coalesced pair was recorded after this one was sent; else not coalesced")
    func coalescedNeedsTheDeviceSilent() {
        var s = Story.undeliveredStored
        // The device recorded something (at 10 min) before the later push was sent (at 30 min): it was reachable.
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: Story.t0 + 600_000,
            laterReached: [Story.neighbour("n-2", sent: 1_800_000, reached: 1_900_000)])
        #expect(s.diagnosis.cause == .notDelivered)
        // A "later" push sent before this one is no neighbour.
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: nil, laterReached: [Story.neighbour("n-0", sent: -60_000, reached: 3_600_000)])
        #expect(s.diagnosis.cause == .notDelivered)
    }

    @Test("expired and coalesced together: expired first")
    func expiredBeforeCoalesced() {
        var s = Story.undeliveredStored
        s.change("push.sent", ["expiration": .int((Story.t0 + 600_000) / 1000)])
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: nil, laterReached: [Story.neighbour("n-2", sent: 300_000, reached: 3_600_000)])
        #expect(s.diagnosis.findings.map(\.code) == [.expiredUndelivered, .coalescedOffline])
    }

    @Test("a later notification with the same collapse ID reached the device: replaced, naming it; an empty one is none")
    func replaced() {
        var s = Story.healthy
        s.notExpanded()
        s.change("push.sent", ["collapse_id": "score-42"])
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: nil,
            laterReached: [
                Story.neighbour("n-3", sent: 300_000, reached: 301_000, collapse: "other"),
                Story.neighbour("n-2", sent: 600_000, reached: 601_000, collapse: "score-42"),
            ])
        let d = s.diagnosis
        #expect(d.cause == .replaced)
        #expect(d.findings[0].related == "n-2")
        // Another collapse ID replaces nothing.
        s.change("push.sent", ["collapse_id": "score-43"])
        #expect(s.diagnosis.cause == .notExpanded)
        // Nor does an empty one, which names no collapse ID, even beside another empty one.
        s.change("push.sent", ["collapse_id": ""])
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: nil, laterReached: [Story.neighbour("n-2", sent: 600_000, reached: 601_000, collapse: "")])
        #expect(s.diagnosis.cause == .notExpanded)
    }

    @Test("a replaced notification that was expanded first is ok")
    func replacedAfterExpansion() {
        var s = Story.healthy
        s.change("push.sent", ["collapse_id": "score-42"])
        s.neighbours = DeviceNeighbours(
            firstRecordAfterSent: nil, laterReached: [Story.neighbour("n-2", sent: 600_000, reached: 601_000, collapse: "score-42")])
        #expect(s.diagnosis.cause == .ok)
    }

    @Test("without settings or the new fields, every answer is as before")
    func oldDataKeepsItsAnswers() {
        var s = Story.healthy
        s.notExpanded()
        #expect(s.diagnosis.cause == .notExpanded)
        #expect(Story.undelivered.diagnosis.cause == .notDelivered)
    }

    @Test("settings read from a record: the wire's names, unknown values kept and read as unknown")
    func settingsDecode() throws {
        let line =
            #"{"type":"config","ts":1763622000000,"process":"app","notification_settings":{"authorization":"authorized","alert_style":"banner","scheduled_delivery":"enabled","time_sensitive":"sometimes"}}"#
        let decoded = try JSONDecoder().decode(Record.self, from: Data(line.utf8))
        let scanned = try #require(line.utf8.withContiguousStorageIfAvailable { Record(scanning: UnsafeRawBufferPointer($0)) } ?? nil)
        #expect(decoded == scanned)
        let settings = try #require(decoded.notificationSettings)
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.scheduledDeliverySetting == .enabled)
        #expect(settings.timeSensitive == "sometimes" && settings.timeSensitiveSetting == nil)
        #expect(settings.nothingShown == nil)
    }
}
