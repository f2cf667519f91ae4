import PushTraceCore
import PushTraceRecords

/// What one bundle tells the product metrics: its counted extension steps and service durations, and the category
/// each notification's `received` event names (later steps of the same notification take it).
///
/// Filled item by item while the body is decoded, with each record at hand, rather than by a second pass over the
/// stored bundle: that pass copied every record out of its item and was a fifteenth of an upload's handling.
struct ProductTally: Sendable {
    /// What a counted step is.
    enum Kind: Sendable {
        case serviceRun, serviceCrash, serviceTimeout, serviceDelivery, contentExpansion, contentAction
    }

    /// One counted step: what it is, its notification, and the service extension's run time when the step ends one.
    struct Step: Sendable {
        var kind: Kind
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
        let kind: Kind
        switch event {
        case .serviceReceived: kind = .serviceRun
        case .serviceAbnormalExit: kind = .serviceCrash
        case .serviceExpired: kind = .serviceTimeout
        case .serviceDelivered: kind = .serviceDelivery
        case .contentReceived: kind = .contentExpansion
        case .contentAction: kind = .contentAction
        default: return
        }
        let ended = kind == .serviceTimeout || kind == .serviceDelivery
        steps.append(Step(kind: kind, notificationID: decoded.notificationID,
                          elapsedMs: ended ? record.elapsedMs.flatMap { $0 >= 0 ? $0 : nil } : nil))
    }

    /// The category of a step's notification, if the bundle named one.
    func category(of step: Step) -> String? {
        step.notificationID.flatMap { categories[$0] }
    }
}
