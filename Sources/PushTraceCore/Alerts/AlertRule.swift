/// A rule that compares a rate of the last window with the same app and category's baseline.
///
/// It fires only when the rise is clear: the window must hold at least `minWindow` notifications (or devices) the
/// rate is taken over, and the lower bound of the window rate's one-sided Wilson interval (at `confidence`) must
/// exceed both `baseline × factor` and `baseline + minIncrease`. A rule over devices needs as many in its baseline
/// too: a share that only starts to be recorded (a new agent version) has not risen.
public struct AlertRule: Codable, Sendable, Hashable {
    /// What a rule measures.
    public enum Metric: String, Codable, Sendable, CaseIterable {
        /// `service.expired` per `service.received`.
        case serviceTimeout = "service_timeout"
        /// Failed downloads or attachments per notification that tried one.
        case attachmentFailure = "attachment_failure"
        /// Extension abnormal exits (service or content) per notification an extension ran for.
        case extensionCrash = "extension_crash"
        /// Devices whose latest notification settings show nothing (docs/protocol.md#notification-settings) per device
        /// with settings, among the app's devices active in the span: an app-wide share, not one per category.
        case notificationsDisabled = "notifications_disabled"

        /// How the rate reads in an alert's text.
        public var noun: String {
            switch self {
            case .serviceTimeout: "service-extension timeouts"
            case .attachmentFailure: "attachment failures"
            case .extensionCrash: "extension crashes"
            case .notificationsDisabled: "devices with notifications disabled"
            }
        }

        /// Whether the rate is taken per category (per notification), or over the app's devices.
        public var byCategory: Bool { self != .notificationsDisabled }
    }

    public var name: String
    public var metric: Metric
    public var enabled: Bool
    /// The window ends at `now`.
    public var windowMinutes: Int
    /// The baseline is the days before the window.
    public var baselineDays: Int
    /// The fewest notifications (or devices) in the window, the rate's denominator, worth judging.
    public var minWindow: Int
    public var factor: Double
    /// The least rise over the baseline, as a fraction (0.02 = 2 percentage points).
    public var minIncrease: Double
    /// The one-sided confidence of the window rate's lower bound (0.99).
    public var confidence: Double

    public init(
        name: String, metric: Metric, enabled: Bool = true, windowMinutes: Int = 60, baselineDays: Int = 7,
        minWindow: Int = 50, factor: Double = 2, minIncrease: Double = 0.02, confidence: Double = 0.99
    ) {
        self.name = name
        self.metric = metric
        self.enabled = enabled
        self.windowMinutes = windowMinutes
        self.baselineDays = baselineDays
        self.minWindow = minWindow
        self.factor = factor
        self.minIncrease = minIncrease
        self.confidence = confidence
    }

    /// The built-in rules, one per metric (docs/spec.md §7's `service_timeout_spike` among them).
    public static let builtIn: [AlertRule] = [
        AlertRule(name: "service_timeout_spike", metric: .serviceTimeout),
        AlertRule(name: "attachment_failure_spike", metric: .attachmentFailure),
        AlertRule(name: "extension_crash_spike", metric: .extensionCrash, minIncrease: 0.01),
        // Week over week: the devices active in the last 7 days against those of the 7 days before.
        AlertRule(
            name: "notifications_disabled_rise", metric: .notificationsDisabled, windowMinutes: 10_080, minWindow: 50,
            factor: 1.5, minIncrease: 0.03),
    ]

    enum CodingKeys: String, CodingKey {
        case name, metric, enabled, windowMinutes = "window_minutes", baselineDays = "baseline_days"
        case minWindow = "min_window", factor, minIncrease = "min_increase", confidence
    }

    /// Problems with the rule's values, as sentences naming the field.
    public var problems: [String] {
        var problems: [String] = []
        if !(1...10_080).contains(windowMinutes) { problems.append("\(name): window_minutes must be 1 to 10080 (a week)") }
        if !(1...366).contains(baselineDays) { problems.append("\(name): baseline_days must be 1 to 366") }
        if minWindow < 1 { problems.append("\(name): min_window must be at least 1") }
        if factor < 1 { problems.append("\(name): factor must be at least 1") }
        if minIncrease < 0 || minIncrease >= 1 { problems.append("\(name): min_increase must be a fraction in [0, 1)") }
        if !(confidence > 0.5 && confidence < 1) { problems.append("\(name): confidence must be between 0.5 and 1, e.g. 0.99") }
        return problems
    }
}
