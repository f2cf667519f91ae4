import PushTraceRecords

/// Answers "why" for one notification (docs/protocol.md#causes): runs every rule over its records and the config in force, and
/// orders the findings by ``Cause`` priority. Pure: no clock, no database, no I/O.
public struct Diagnoser: Sendable {
    public var settings: DiagnosisSettings

    public init(settings: DiagnosisSettings = .default) {
        self.settings = settings
    }

    public func diagnose(_ input: DiagnosisInput) -> Diagnosis {
        guard !input.entries.isEmpty else {
            let finding = Finding(
                .unknownNotification,
                "Nothing is stored for notification \(input.notificationID)"
                    + (input.appID.isEmpty ? "." : " in \(input.appID)."),
                evidence: [],
                fix: "Check the ID (it is the apns-id / UNNotificationRequest.identifier), the app, "
                    + "and that the backend posts push.sent and the device has uploaded its bundles.")
            return Diagnosis(cause: .unknownNotification, findings: [finding])
        }
        let facts = Facts(input)
        var findings: [Finding] = []
        findings += PayloadRules.findings(facts)
        findings += SettingsRules.findings(facts)
        findings += ServiceRules.findings(facts)
        findings += ConfigurationRules.findings(facts)
        findings += ContentRules.findings(facts, settings: settings)
        findings += DeliveryRules.findings(facts, settings: settings)
        findings.sort { $0.code < $1.code }
        if findings.isEmpty {
            let ok = Finding(
                .ok, "Delivered, expanded, the card shown, and every action handled.",
                evidence: facts.all(.contentReceived) + facts.all(.contentAction), fix: "Nothing to change.")
            findings = [ok]
        }
        return Diagnosis(cause: findings[0].code, findings: findings)
    }
}

/// The records of one notification, indexed the way the rules ask for them.
struct Facts {
    let input: DiagnosisInput
    let sent: TimelineEntry?
    let deviceEntries: [TimelineEntry]

    init(_ input: DiagnosisInput) {
        self.input = input
        self.sent = input.entries.first { $0.event == .pushSent }
        self.deviceEntries = input.entries.filter { $0.process != .server }
    }

    var config: ConfigInForce { input.config }

    func all(_ event: EventName) -> [TimelineEntry] { input.entries.filter { $0.event == event } }
    func first(_ event: EventName) -> TimelineEntry? { input.entries.first { $0.event == event } }
    func has(_ event: EventName) -> Bool { first(event) != nil }

    /// The push's category: from `push.sent`, else as the extensions saw it.
    var category: String? {
        sent?.record.category ?? first(.serviceReceived)?.record.category ?? first(.contentReceived)?.record.category
    }

    /// The entry that names the category, for evidence.
    var categoryEvidence: [TimelineEntry] {
        [sent ?? first(.serviceReceived) ?? first(.contentReceived)].compactMap { $0 }
    }

    var shownOnDevice: [TimelineEntry] { input.entries.filter { $0.event.map(EventName.shownOnDevice.contains) ?? false } }

    /// The level it was delivered at, with the record that says so: the service extension's content handed back
    /// wins over the push's; absent is `active`.
    var interruptionLevel: (level: InterruptionLevel, entry: TimelineEntry?) {
        if let delivered = all(.serviceDelivered).last(where: { $0.record.interruptionLevel != nil }) {
            return (InterruptionLevel(wire: delivered.record.interruptionLevel), delivered)
        }
        return (InterruptionLevel(wire: sent?.record.interruptionLevel), sent)
    }
}

/// Formats milliseconds as seconds for sentences ("28.0 s").
func seconds(_ ms: Int64) -> String {
    // A stored duration from before values were bounded at ingest may be anything.
    guard (-(1 << 50)...(1 << 50)).contains(ms) else { return "\(ms) ms (out of range)" }
    let tenths = (ms + 50) / 100
    return "\(tenths / 10).\(tenths % 10) s"
}

/// Formats a memory size for sentences ("23.8 MB", in units of 2^20 bytes, as memory limits are counted).
func megabytes(_ bytes: Int64) -> String {
    guard WireBounds.byteCount.contains(bytes) else { return "\(bytes) bytes (out of range)" }
    let tenths = (bytes * 10 + 524_288) / 1_048_576
    return "\(tenths / 10).\(tenths % 10) MB"
}

/// Formats a file size for sentences ("12.0 MB", in units of 1,000,000 bytes, as Apple writes attachment limits).
func fileMegabytes(_ bytes: Int64) -> String {
    guard WireBounds.byteCount.contains(bytes) else { return "\(bytes) bytes (out of range)" }
    let tenths = (bytes * 10 + 500_000) / 1_000_000
    return "\(tenths / 10).\(tenths % 10) MB"
}
