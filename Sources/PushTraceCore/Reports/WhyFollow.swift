import PushTraceRecords

extension WhyReport {
    /// Whether the answer can still change as more records arrive: nothing is stored yet, the device has not
    /// uploaded, or the service extension started and has neither delivered nor expired. Live follow (the console's
    /// page, `pushtrace why --follow`) ends once this is false.
    public var mayStillChange: Bool {
        switch diagnosis.cause {
        case .unknownNotification, .awaitingDeviceLogs: return true
        default: break
        }
        let events = Set(timeline.compactMap(\.event))
        return events.contains(.serviceReceived) && !events.contains(.serviceDelivered)
            && !events.contains(.serviceExpired)
    }
}

/// What live follow sends about one notification: its new records and the changes of its answer, worked out from
/// the successive answers read from the store. Pure: the server's event stream and `pushtrace why --follow --db`
/// feed it the answers they read, so both say the same.
public struct WhyFollow: Sendable {
    /// One thing to tell the follower.
    public enum Event: Sendable, Equatable {
        /// A record not sent before, as the `why` JSON's timeline holds it.
        case record(JSONValue)
        /// The answer changed (or is told for the first time): the `why` JSON without its timeline, and whether it
        /// can still change.
        case cause(JSONValue, final: Bool)
    }

    /// The records sent so far, by the text of their timeline JSON (with their corrected time): a record can land in
    /// the middle of the timeline once clocks are corrected, so a count would miss it.
    private var sent: Set<String> = []
    private var lastAnswer: JSONValue?

    public init() {}

    /// The events `report` brings beyond what was sent before; the first call tells the whole answer.
    public mutating func events(for report: WhyReport) -> [Event] {
        var events: [Event] = []
        for entry in report.timeline {
            let value = entry.jsonValue
            if sent.insert(value.jsonText(pretty: false)).inserted { events.append(.record(value)) }
        }
        guard case .object(var answer) = report.jsonValue else { return events }
        answer["timeline"] = nil
        let value = JSONValue.object(answer)
        if value != lastAnswer {
            lastAnswer = value
            events.append(.cause(value, final: !report.mayStillChange))
        }
        return events
    }
}

extension WhyFollow.Event {
    /// The Server-Sent Events name of the event (docs/console.md): `record` or `cause`.
    public var name: String {
        switch self {
        case .record: return "record"
        case .cause: return "cause"
        }
    }

    /// The event's data line: compact JSON, with `final` added to a `cause`.
    public var data: String {
        switch self {
        case .record(let value): return value.jsonText(pretty: false)
        case .cause(let value, let final):
            guard case .object(var fields) = value else { return value.jsonText(pretty: false) }
            fields["final"] = .bool(final)
            return JSONValue.object(fields).jsonText(pretty: false)
        }
    }
}

/// Live follow as a terminal shows it (`pushtrace why --follow`): a line per record, times relative to the first
/// record shown, and the answer whenever it changes. Every stored text is escaped (``TerminalText``).
public struct WhyFollowText: Sendable {
    private var origin: Int64?

    public init() {}

    /// The lines an event prints.
    public mutating func lines(for event: WhyFollow.Event) -> String {
        let safe = TerminalText.escaped
        switch event {
        case .record(let value):
            guard case .object(let fields) = value else { return "" }
            let ts = fields["ts"]?.intValue ?? 0
            let origin = self.origin ?? ts
            self.origin = origin
            let envelope: Set<String> = ["type", "ts", "device_ts", "process", "event", "notification_id", "out_of_range"]
            let detail = fields.keys.sorted().filter { !envelope.contains($0) }.map { "\($0)=\(fields[$0]!.compactText)" }
                .joined(separator: " ")
            let process = safe(fields["process"]?.stringValue ?? "?").padding(toLength: 8, withPad: " ", startingAt: 0)
            let name = safe(fields["event"]?.stringValue ?? fields["type"]?.stringValue ?? "?")
            var out = "  \(WhyReport.relative(ts - origin))  \(process)\(name)\n"
            if !detail.isEmpty { out += wrap(safe(detail), indent: String(repeating: " ", count: 14)) + "\n" }
            return out
        case .cause(let value, let final):
            guard case .object(let fields) = value else { return "" }
            let cause = fields["cause"]?.stringValue ?? "?"
            var out = "cause: \(safe(cause))\(final ? "" : " (may still change)")\n"
            if case .array(let findings)? = fields["findings"], case .object(let primary)? = findings.first {
                out += wrap(safe(primary["message"]?.stringValue ?? ""), indent: "  ") + "\n"
                out += wrap("fix: " + safe(primary["fix"]?.stringValue ?? ""), indent: "  ") + "\n"
            }
            return out
        }
    }
}
