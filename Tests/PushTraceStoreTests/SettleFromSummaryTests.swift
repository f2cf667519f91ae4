import Foundation
import PushTraceCore
import PushTraceSimulator
import PushTraceStore
import PushTraceTestSupport
import Testing

/// Settling decides most causes from the summary and its `cause_flags` (``Diagnoser/cause(of:config:lastSeen:)``),
/// and `why` from the records: the two must agree for every notification, whatever arrives in whatever order.
@Suite("Settling from the summary answers as why does")
struct SettleFromSummaryTests {
    @Test("every notification of a simulated fleet is settled on why's cause, nearly all from the summary", arguments: TestEngine.all)
    func simulatedFleet(engine: TestEngine) async throws {
        let incident = try #require(InstantText.parse("2026-11-14T18:00:00Z"))
        let temporary = try TemporaryStore(engine: engine)
        let bundles = temporary.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(
            SimulationOptions(seed: 7, notifications: 800, incident: SimulatedIncident(start: incident)), into: bundles)
        try temporary.ingestFiles(in: bundles)
        let (rows, mismatches) = try await Self.compare(temporary.store)
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(Set(rows.map(\.cause)).count >= 7, "\(Set(rows.map(\.cause)))")
        let fromSummary = rows.filter(\.decidable).count
        #expect(fromSummary * 100 >= rows.count * 95, "\(fromSummary) of \(rows.count) decided from the summary")
    }

    @Test("random records of a few notifications, from the backend and two devices, in any order of bundles", arguments: TestEngine.all)
    func randomArrivals(engine: TestEngine) async throws {
        var decidable = 0, total = 0
        for seed in UInt64(1)...UInt64(engine == .sqlite ? 40 : 12) {
            var random = SeededRandom(seed: seed)
            let temporary = try TemporaryStore(engine: engine)
            var bundles = RandomNotifications.bundles(&random)
            bundles.shuffle(using: &random)
            for bundle in bundles {
                let result = try temporary.ingest(bundle.lines, receivedAt: bundle.receivedAt)
                #expect(result.accepted > 0)
                if Bool.random(using: &random) { try temporary.store.settleCauses() }
            }
            try temporary.store.settleCauses()
            let (rows, mismatches) = try await Self.compare(temporary.store)
            #expect(mismatches.isEmpty, "seed \(seed): \(mismatches)")
            decidable += rows.filter(\.decidable).count
            total += rows.count
        }
        // Random records make many ambiguous summaries; enough must be decided from the summary for this to test it.
        #expect(decidable * 6 >= total, "\(decidable) of \(total)")
    }

    struct Row: CustomStringConvertible {
        var appID: String
        var notificationID: String
        var cause: String
        var decidable: Bool
        var description: String { "\(notificationID): \(cause)" }
    }

    /// Every notification's stored cause against `why`'s; whether the summary alone decided it.
    static func compare(_ store: any TraceStore) async throws -> (rows: [Row], mismatches: [String]) {
        var stored: [(row: Row, facts: NotificationFacts)] = []
        var columns = SQLColumns([])
        try store.readOnlyQuery(
            "SELECT app_id, notification_id, cause, \(NotificationFacts.storedColumnList) FROM notification ORDER BY 1, 2",
            columns: { columns = SQLColumns($0) }
        ) { values in
            let row = SQLRow(columns: columns, values: values.map(\.sqlValue))
            stored.append(
                (
                    Row(
                        appID: try row.decode("app_id"), notificationID: try row.decode("notification_id"),
                        cause: try row.decode("cause"), decidable: false),
                    try NotificationFacts(stored: row)
                ))
        }
        var rows: [Row] = []
        for (row, facts) in stored {
            var decided = row
            decided.decidable =
                try await Diagnoser().cause(of: facts.folded, config: { _, _ in ConfigInForce() }, lastSeen: { _ in nil }) != nil
            rows.append(decided)
        }
        var mismatches: [String] = []
        for row in rows {
            let why = try await store.why(appID: row.appID, notificationID: row.notificationID).diagnosis.cause.rawValue
            if why != row.cause { mismatches.append("\(row.notificationID): settled \(row.cause), why \(why)") }
        }
        return (rows, mismatches)
    }
}

/// Bundles of random records naming a few notifications: every event the rules read, with values that make summaries
/// disagree with the records (two pushes, two devices, categories that differ, logs before events, times compared).
enum RandomNotifications {
    struct Bundle {
        var lines: [String]
        var receivedAt: Int64
    }

    static func bundles(_ random: inout SeededRandom) -> [Bundle] {
        let ids = (1...6).map { "N-\($0)" }
        let t0 = Lines.t0
        var bundles: [Bundle] = []
        for index in 0..<Int.random(in: 3...9, using: &random) {
            let device = ["d-1", "d-1", "d-2", nil].randomElement(using: &random)!
            // A backend's bundles hold push.sent and APNs answers; a device's the extensions' steps and its config.
            var lines = [Lines.manifest(bundle: "b-\(index)", device: device)]
            if device != nil, Int.random(in: 0..<3, using: &random) == 0 {
                lines.append(config(&random, t0: t0))
            }
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let id = ids.randomElement(using: &random)!
                let ts = t0 + Int64.random(in: -60_000...3_600_000, using: &random)
                lines.append(device == nil ? serverLine(id, ts: ts, &random) : deviceLine(id, ts: ts, &random))
            }
            let late = Int64.random(in: 0...4_000_000, using: &random)
            bundles.append(Bundle(lines: lines, receivedAt: t0 + 3_700_000 + late))
        }
        return bundles
    }

    private static func pick<T>(_ values: [T], _ random: inout SeededRandom) -> T { values.randomElement(using: &random)! }

    private static func serverLine(_ id: String, ts: Int64, _ random: inout SeededRandom) -> String {
        if Int.random(in: 0..<4, using: &random) == 0 {
            let status = pick([200, 200, 410], &random)
            return
                #"{"type":"event","ts":\#(ts),"process":"server","event":"push.apns_response","notification_id":"\#(id)","status":\#(status)}"#
        }
        let url = pick(
            [
                "", #","attachment_url":"https://cdn.example.com/a.jpg""#, #","attachment_url":"https://cdn.example.com/a""#,
                #","attachment_url":"https://cdn.example.com/clip.mp4""#, #","attachment_url":"https://cdn.example.com/a.php?x=1""#,
            ], &random)
        let device = pick(["", #","device_id":"d-1""#, #","device_id":"d-2""#], &random)
        return
            #"{"type":"event","ts":\#(ts),"process":"server","event":"push.sent","notification_id":"\#(id)","category":"\#(pick(["A", "B", "A"], &random))","mutable_content":\#(pick([true, true, false], &random)),"has_alert":\#(pick([true, true, false], &random)),"payload_bytes":700\#(url)\#(device)}"#
    }

    private static func deviceLine(_ id: String, ts: Int64, _ random: inout SeededRandom) -> String {
        let head = #""type":"event","ts":\#(ts),"notification_id":"\#(id)""#
        switch Int.random(in: 0..<19, using: &random) {
        case 0: return #"{\#(head),"process":"service","event":"service.received","category":"\#(pick(["A", "B"], &random))"}"#
        case 1:
            let fields = pick([#","http_status":200"#, #","http_status":404"#, #","error":"timed out""#, ""], &random)
            let size = pick(["", #","bytes":300000"#, #","bytes":7000000"#, #","bytes":12000000"#, #","bytes":60000000"#], &random)
            let mime = pick(["", #","mime":"image/jpeg""#, #","mime":"audio/mpeg""#], &random)
            return
                #"{\#(head),"process":"service","event":"service.download","url_host":"cdn.example.com","duration_ms":\#(Int.random(in: 10...40_000, using: &random))\#(fields)\#(size)\#(mime)}"#
        case 2:
            let size = pick(["", #","bytes":300000"#, #","bytes":12000000"#], &random)
            let uti = pick(["", #","uti":"public.jpeg""#], &random)
            return
                #"{\#(head),"process":"service","event":"service.attachment","ok":\#(pick([true, true, false], &random))\#(size)\#(uti)}"#
        case 3: return #"{\#(head),"process":"service","event":"service.delivered","elapsed_ms":400}"#
        case 4: return #"{\#(head),"process":"service","event":"service.expired","elapsed_ms":29900}"#
        case 5: return #"{\#(head),"process":"service","event":"service.abnormal_exit","last_footprint_bytes":25000000}"#
        case 6: return #"{\#(head),"process":"content","event":"content.received","category":"\#(pick(["A", "B"], &random))"}"#
        case 7, 8:
            let response = pick(["doNotDismiss", "dismiss", "dismissAndForwardAction"], &random)
            return
                #"{\#(head),"process":"content","event":"content.action","action":"\#(pick(["LIKE", "SAVE"], &random))","response":"\#(response)"}"#
        case 9: return #"{\#(head),"process":"content","event":"content.completion_timeout","action":"LIKE","waited_ms":5000}"#
        case 10: return #"{\#(head),"process":"content","event":"content.abnormal_exit"}"#
        case 11:
            return
                #"{\#(head),"process":"\#(pick(["content", "app"], &random))","event":"shared.write","suite":"\#(pick(["group.a", "group.b"], &random))","key":"liked"}"#
        case 12:
            return
                #"{\#(head),"process":"\#(pick(["content", "app"], &random))","event":"shared.read","suite":"\#(pick(["group.a", "group.b"], &random))","key":"liked","found":\#(pick([true, false], &random))}"#
        case 13: return #"{\#(head),"process":"app","event":"app.will_present"}"#
        case 14: return #"{\#(head),"process":"app","event":"app.response","action":"LIKE"}"#
        case 15: return #"{\#(head),"process":"server","event":"push.apns_response","status":200}"#
        case 16: return #"{\#(head),"process":"app","event":"app.custom_step"}"#
        case 17:
            return #"{"type":"log","ts":\#(ts - 120_000),"process":"service","level":"info","message":"early","notification_id":"\#(id)"}"#
        default: return #"{"type":"log","ts":\#(ts),"process":"content","level":"info","message":"step","notification_id":"\#(id)"}"#
        }
    }

    private static func config(_ random: inout SeededRandom, t0: Int64) -> String {
        let ts = t0 + Int64.random(in: -120_000...600_000, using: &random)
        if Bool.random(using: &random) {
            let categories = pick([#"[{"id":"A","actions":["LIKE"]}]"#, #"[{"id":"A","actions":[]},{"id":"B","actions":[]}]"#], &random)
            return #"{"type":"config","ts":\#(ts),"process":"app","app_group":"group.a","categories":\#(categories)}"#
        }
        let handled = pick([#"["A"]"#, #"["A","B"]"#], &random)
        let interaction = pick(["true", "false"], &random)
        return
            #"{"type":"config","ts":\#(ts),"process":"content","app_group":"group.a","interactive_controls":\#(pick(["true", "false"], &random)),"info_plist":{"UNNotificationExtensionCategory":\#(handled),"UNNotificationExtensionUserInteractionEnabled":\#(interaction)}}"#
    }
}
