import Foundation
import PushTraceRecords

/// Failures and totals of the alert metrics for one app and category over some span.
public struct RateCounts: Sendable, Hashable {
    public var serviceRan = 0
    public var serviceTimeouts = 0
    public var attachmentTries = 0
    public var attachmentFailures = 0
    public var extensionRuns = 0
    public var extensionCrashes = 0
    /// The app's devices active in the span with a settings record, and those of them with notifications disabled.
    public var devicesWithSettings = 0
    public var devicesDisabled = 0

    public init() {}

    /// The device counts of an app's audience over the span.
    public init(audience: AudienceFigures) {
        devicesWithSettings = audience.withSettings
        devicesDisabled = audience.notificationsDisabled
    }

    /// Adds the counts of `rhs` (two spans of the same app and category).
    public static func += (lhs: inout RateCounts, rhs: RateCounts) {
        lhs.serviceRan += rhs.serviceRan
        lhs.serviceTimeouts += rhs.serviceTimeouts
        lhs.attachmentTries += rhs.attachmentTries
        lhs.attachmentFailures += rhs.attachmentFailures
        lhs.extensionRuns += rhs.extensionRuns
        lhs.extensionCrashes += rhs.extensionCrashes
        lhs.devicesWithSettings += rhs.devicesWithSettings
        lhs.devicesDisabled += rhs.devicesDisabled
    }

    /// (failures, total) of `metric`.
    public func counts(_ metric: AlertRule.Metric) -> (failures: Int, total: Int) {
        switch metric {
        case .serviceTimeout: (serviceTimeouts, serviceRan)
        case .attachmentFailure: (attachmentFailures, attachmentTries)
        case .extensionCrash: (extensionCrashes, extensionRuns)
        case .notificationsDisabled: (devicesDisabled, devicesWithSettings)
        }
    }
}

/// One app and category's counts in a rule's window and in its baseline.
public struct AlertSample: Sendable, Hashable {
    public var appID: String
    public var category: String
    public var window: RateCounts
    public var baseline: RateCounts

    public init(appID: String, category: String, window: RateCounts = RateCounts(), baseline: RateCounts = RateCounts()) {
        self.appID = appID
        self.category = category
        self.window = window
        self.baseline = baseline
    }
}

/// The spans a rule compares as of `now`: the window `[now − window, now)` and the baseline days before it.
public struct AlertSpans: Sendable, Hashable {
    public var windowStart: Int64
    public var windowEnd: Int64
    public var baselineStart: Int64
    public var baselineEnd: Int64

    public init(rule: AlertRule, now: Int64) {
        // Saturating: `now` is bounded where it is read (WireBounds), but a span must not trap whatever it is given.
        func minus(_ a: Int64, _ count: Int, _ unit: Int64) -> Int64 {
            let (span, spanOverflow) = Int64(clamping: count).multipliedReportingOverflow(by: unit)
            let (value, overflow) = a.subtractingReportingOverflow(span)
            return spanOverflow || overflow ? (count >= 0 ? .min : .max) : value
        }
        windowEnd = now
        windowStart = minus(now, rule.windowMinutes, 60_000)
        baselineEnd = windowStart
        baselineStart = minus(windowStart, rule.baselineDays, 86_400_000)
    }
}

/// A rule that fires for one app and category.
public struct FiringAlert: Encodable, Sendable, Hashable {
    public var rule: String
    public var metric: String
    public var appID: String
    public var category: String
    public var windowRate: Double
    public var baselineRate: Double
    /// Failures and notifications in the window and the baseline.
    public var windowFailures: Int
    public var windowTotal: Int
    public var baselineFailures: Int
    public var baselineTotal: Int
    /// The window rate's lower confidence bound, and what it had to exceed.
    public var lowerBound: Double
    public var threshold: Double
    public var windowStart: Int64
    public var windowEnd: Int64
    /// One line for a chat channel.
    public var text: String
    /// The console's page of the alert's notifications, when the server's public URL is known (`--public-url`).
    public var consoleURL: String?

    enum CodingKeys: String, CodingKey {
        case rule, metric, appID = "app_id", category, windowRate = "window_rate", baselineRate = "baseline_rate"
        case windowFailures = "window_failures", windowTotal = "window_total", baselineFailures = "baseline_failures"
        case baselineTotal = "baseline_total", lowerBound = "lower_bound", threshold, windowStart = "window_start"
        case windowEnd = "window_end", text, consoleURL = "console_url"
    }
}

/// The answer of `pushtrace alerts` and `GET /v1/alerts`.
public struct AlertReport: Encodable, Sendable {
    public var now: Int64
    /// Rule × app × category combinations judged (those with enough volume in the window).
    public var evaluated: Int
    public var firing: [FiringAlert]

    public init(now: Int64, evaluated: Int, firing: [FiringAlert]) {
        self.now = now
        self.evaluated = evaluated
        self.firing = firing
    }

    /// One line per firing alert, or a line that says nothing fires and whether anything could have.
    public var text: String {
        guard firing.isEmpty else {
            return firing.map { "FIRING " + $0.text + ($0.consoleURL.map { "\n  see " + $0 } ?? "") }.joined(separator: "\n") + "\n"
        }
        let asOf = "no alert fires as of \(InstantText.format(now)) UTC"
        // `evaluated` counts rule × app × category windows with the volume to be judged.
        return evaluated == 0
            ? asOf + ": no window had enough notifications to judge (a rule's min_window) for any app and category\n"
            : asOf + " (\(evaluated) rule, app and category \(evaluated == 1 ? "window" : "windows") judged)\n"
    }
}

/// Judges samples against a rule. Pure: the store supplies the counts.
public enum AlertEvaluator {
    /// The alerts `rule` raises over `samples` (one per app and category, counted over `AlertSpans(rule:now:)`),
    /// and how many samples had the volume to be judged.
    public static func evaluate(_ rule: AlertRule, samples: [AlertSample], spans: AlertSpans) -> (firing: [FiringAlert], judged: Int) {
        let z = Statistics.normalQuantile(rule.confidence)
        var firing: [FiringAlert] = []
        var judged = 0
        for sample in samples {
            let window = sample.window.counts(rule.metric), baseline = sample.baseline.counts(rule.metric)
            guard window.total >= rule.minWindow, rule.metric.byCategory || baseline.total >= rule.minWindow else { continue }
            judged += 1
            let windowRate = Double(window.failures) / Double(window.total)
            let baselineRate = baseline.total > 0 ? Double(baseline.failures) / Double(baseline.total) : 0
            let lower = Statistics.wilsonLowerBound(successes: window.failures, trials: window.total, z: z)
            let threshold = max(baselineRate * rule.factor, baselineRate + rule.minIncrease)
            guard lower > threshold else { continue }
            let percent = { (rate: Double) in ReportText.fixed(rate * 100, 1) + "%" }
            let category = sample.category.isEmpty ? "(no category)" : TerminalText.escaped(sample.category)
            let subject = TerminalText.escaped(sample.appID) + (rule.metric.byCategory ? " / \(category)" : "")
            let span =
                rule.windowMinutes % 1440 == 0
                ? "\(rule.windowMinutes / 1440) \(rule.windowMinutes == 1440 ? "day" : "days")" : "\(rule.windowMinutes) min"
            let text =
                "\(rule.name): \(subject): "
                + "\(rule.metric.noun) \(percent(windowRate)) (\(window.failures) of \(window.total)) in the "
                + "\(span) to \(InstantText.format(spans.windowEnd)) UTC, against \(percent(baselineRate)) "
                + "(\(baseline.failures) of \(baseline.total)) over the \(rule.baselineDays) days before; at least "
                + "\(percent(lower)) with \(ReportText.fixed(rule.confidence * 100, 0))% confidence, threshold \(percent(threshold))"
            firing.append(
                FiringAlert(
                    rule: rule.name, metric: rule.metric.rawValue, appID: sample.appID, category: sample.category,
                    windowRate: windowRate, baselineRate: baselineRate, windowFailures: window.failures,
                    windowTotal: window.total, baselineFailures: baseline.failures, baselineTotal: baseline.total,
                    lowerBound: lower, threshold: threshold, windowStart: spans.windowStart, windowEnd: spans.windowEnd,
                    text: text))
        }
        return (firing, judged)
    }
}

/// The few statistics the alerts need.
public enum Statistics {
    /// The lower bound of the Wilson score interval for `successes` of `trials` at the normal quantile `z`.
    public static func wilsonLowerBound(successes: Int, trials: Int, z: Double) -> Double {
        guard trials > 0 else { return 0 }
        let n = Double(trials), p = Double(successes) / n, z2 = z * z
        let centre = p + z2 / (2 * n)
        let margin = z * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return max(0, (centre - margin) / (1 + z2 / n))
    }

    /// The standard normal quantile of `p` (Acklam's rational approximation, relative error below 1.2e-9).
    public static func normalQuantile(_ p: Double) -> Double {
        let a = [
            -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
            -3.066479806614716e+01, 2.506628277459239e+00,
        ]
        let b = [
            -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
            -1.328068155288572e+01,
        ]
        let c = [
            -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
            4.374664141464968e+00, 2.938163982698783e+00,
        ]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        if p > 1 - low { return -normalQuantile(1 - p) }
        let q = p - 0.5, r = q * q
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    }
}
