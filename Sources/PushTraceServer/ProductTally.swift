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

    private(set) var steps: [Step] = []
    /// Each (notification, category) a record names, in order. Made into a lookup only for a bundle with steps: the
    /// backend's bundles name thousands and count none.
    private var named: [(notificationID: String, category: String)] = []

    /// Takes note of one decoded item; only records of a few events count.
    mutating func observe(_ item: BundleItem) {
        guard case .record(let decoded) = item else { return }
        let record = decoded.record
        if let id = decoded.notificationID, let category = record.category { named.append((id, category)) }
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
        steps.append(
            Step(
                kind: kind, notificationID: decoded.notificationID,
                elapsedMs: ended ? record.elapsedMs.flatMap { $0 >= 0 ? $0 : nil } : nil))
    }

    /// Each step with its notification's category, if the bundle named one (the last naming wins).
    func categorizedSteps() -> [(step: Step, category: String?)] {
        guard !steps.isEmpty else { return [] }
        let categories = Dictionary(named, uniquingKeysWith: { $1 })
        return steps.map { ($0, $0.notificationID.flatMap { categories[$0] }) }
    }
}
