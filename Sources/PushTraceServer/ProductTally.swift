import PushTraceCore
import PushTraceRecords

/// What one bundle tells the product metrics: its counted extension steps and service durations, and the category
/// each notification's `received` event names (later steps of the same notification take it).
///
/// Filled item by item while the body is decoded, with each record at hand, rather than by a second pass over the
/// stored bundle: that pass copied every record out of its item and was a fifteenth of an upload's handling.
struct ProductTally: Sendable {
    /// One counted step: the counter it adds to (nil for a delivery, which only has a duration), its notification,
    /// and the service extension's run time when the step ends one.
    struct Step: Sendable {
        var metric: String?
        var notificationID: String?
        var elapsedMs: Int64?
    }

    private(set) var categories: [String: String] = [:]
    private(set) var steps: [Step] = []

    /// Takes note of one decoded item; only records of a few events count.
    mutating func observe(_ item: BundleItem) {
        guard case .record(let decoded) = item else { return }
        let record = decoded.record
        if let id = decoded.notificationID, let category = record.category { categories[id] = category }
        guard let event = record.eventName else { return }
        switch event {
        case .serviceReceived: steps.append(Step(metric: "pushtrace_service_runs_total", notificationID: decoded.notificationID))
        case .serviceAbnormalExit:
            steps.append(Step(metric: "pushtrace_service_crashes_total", notificationID: decoded.notificationID))
        case .contentReceived:
            steps.append(Step(metric: "pushtrace_content_expansions_total", notificationID: decoded.notificationID))
        case .contentAction: steps.append(Step(metric: "pushtrace_content_actions_total", notificationID: decoded.notificationID))
        case .serviceExpired, .serviceDelivered:
            let elapsed = record.elapsedMs.flatMap { $0 >= 0 ? $0 : nil }
            steps.append(Step(metric: event == .serviceExpired ? "pushtrace_service_timeouts_total" : nil,
                              notificationID: decoded.notificationID, elapsedMs: elapsed))
        default:
            break
        }
    }

    /// The category of a step's notification, if the bundle named one.
    func category(of step: Step) -> String? {
        step.notificationID.flatMap { categories[$0] }
    }
}
