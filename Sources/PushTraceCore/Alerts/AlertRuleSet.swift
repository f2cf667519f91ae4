import Yams

/// The rules in force: the built-in ones, changed, disabled or added to by a YAML file.
///
/// ```yaml
/// rules:
///   - name: service_timeout_spike     # a built-in rule: only the fields given change
///     min_window: 100
///     factor: 3
///   - name: extension_crash_spike
///     enabled: false
///   - name: newsbrief_timeouts_fast   # a new rule names its metric
///     metric: service_timeout
///     window_minutes: 15
/// ```
public struct AlertRuleSet: Sendable {
    public var rules: [AlertRule]

    public init(rules: [AlertRule] = AlertRule.builtIn) {
        self.rules = rules
    }

    /// The built-in rules with the file's changes; an error names the rule and field that is wrong.
    public init(yaml: String) throws {
        let file: RulesFile
        do {
            file = try YAMLDecoder().decode(RulesFile.self, from: yaml)
        } catch let error as DecodingError {
            throw AlertConfigError(message: Self.describe(error))
        } catch {
            throw AlertConfigError(message: "not valid YAML: \(error)")
        }
        var rules = AlertRule.builtIn
        for (index, entry) in (file.rules ?? []).enumerated() {
            guard let name = entry.name, !name.isEmpty else {
                throw AlertConfigError(message: "rules[\(index)]: a rule needs a name")
            }
            var rule: AlertRule
            if let existing = rules.firstIndex(where: { $0.name == name }) {
                rule = rules[existing]
                if let metric = entry.metric { rule.metric = metric }
            } else {
                guard let metric = entry.metric else {
                    throw AlertConfigError(
                        message: "rules[\(index)] \(name): a new rule needs a metric ("
                            + AlertRule.Metric.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                rule = AlertRule(name: name, metric: metric)
            }
            rule.enabled = entry.enabled ?? rule.enabled
            rule.windowMinutes = entry.windowMinutes ?? rule.windowMinutes
            rule.baselineDays = entry.baselineDays ?? rule.baselineDays
            rule.minWindow = entry.minWindow ?? rule.minWindow
            rule.factor = entry.factor ?? rule.factor
            rule.minIncrease = entry.minIncrease ?? rule.minIncrease
            rule.confidence = entry.confidence ?? rule.confidence
            if let problem = rule.problems.first { throw AlertConfigError(message: "rules[\(index)] \(problem)") }
            if let existing = rules.firstIndex(where: { $0.name == name }) { rules[existing] = rule } else { rules.append(rule) }
        }
        self.rules = rules
    }

    /// The enabled rules.
    public var active: [AlertRule] { rules.filter(\.enabled) }

    private struct RulesFile: Decodable {
        var rules: [Entry]?

        enum CodingKeys: String, CodingKey, CaseIterable { case rules }

        init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, known: CodingKeys.allCases)
            rules = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent([Entry].self, forKey: .rules)
        }
    }

    private struct Entry: Decodable {
        var name: String?
        var metric: AlertRule.Metric?
        var enabled: Bool?
        var windowMinutes: Int?
        var baselineDays: Int?
        var minWindow: Int?
        var factor: Double?
        var minIncrease: Double?
        var confidence: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, metric, enabled, windowMinutes = "window_minutes", baselineDays = "baseline_days"
            case minWindow = "min_window", factor, minIncrease = "min_increase", confidence
        }

        init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, known: CodingKeys.allCases)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            metric = try container.decodeIfPresent(AlertRule.Metric.self, forKey: .metric)
            enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
            windowMinutes = try container.decodeIfPresent(Int.self, forKey: .windowMinutes)
            baselineDays = try container.decodeIfPresent(Int.self, forKey: .baselineDays)
            minWindow = try container.decodeIfPresent(Int.self, forKey: .minWindow)
            factor = try container.decodeIfPresent(Double.self, forKey: .factor)
            minIncrease = try container.decodeIfPresent(Double.self, forKey: .minIncrease)
            confidence = try container.decodeIfPresent(Double.self, forKey: .confidence)
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
                .trimmingPrefix(".").description
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            return "\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            return "\(path(context).isEmpty ? "the file" : path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

/// A misspelt setting would otherwise be ignored without a word: refuse it, naming it.
private func rejectUnknownKeys<Key: CodingKey>(_ decoder: any Decoder, known: [Key]) throws {
    let names = Set(known.map(\.stringValue))
    let container = try decoder.container(keyedBy: AnyKey.self)
    if let unknown = container.allKeys.first(where: { !names.contains($0.stringValue) }) {
        throw DecodingError.dataCorruptedError(
            forKey: unknown, in: container,
            debugDescription: "unknown setting \"\(unknown.stringValue)\"; known: \(known.map(\.stringValue).joined(separator: ", "))")
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A rules file that cannot be used, with what is wrong and where.
public struct AlertConfigError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}
