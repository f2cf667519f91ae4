import PushTraceRecords

/// APNs's own delivery rules (docs/protocol.md#causes): what they make of a push that never arrived
/// (`expired_undelivered`, `coalesced_offline`) and of one delivered but never expanded (`replaced`).
enum APNsRules {
    /// The refinements of `not_delivered`: the push expired while the device could not be reached, or APNs kept
    /// a later push to the device instead. Both rest on the push's `expiration`: a push without it (a backend that
    /// does not report the header) is answered as before.
    static func undeliveredFindings(_ facts: Facts, sent: TimelineEntry, accepted: [TimelineEntry]) -> [Finding] {
        var findings: [Finding] = []
        let device = sent.record.deviceID ?? "?"
        let back = firstRecordAfter(sent, facts.input.neighbours)
        if let expiration = sent.record.expiration {
            let expiresAt =
                expiration == 0 ? sent.ts : WireBounds.clampedEpoch(expiration.multipliedReportingOverflow(by: 1000).partialValue)
            if expiration == 0 || (back.map { expiresAt < $0 } ?? false) {
                let when =
                    expiration == 0
                    ? "apns-expiration 0 (deliver now or never)"
                    : "apns-expiration \(InstantText.format(expiresAt)) UTC"
                findings.append(
                    Finding(
                        .expiredUndelivered,
                        "The push had \(when), and device \(device) could not be reached until "
                            + "\(back.map { InstantText.format($0) + " UTC" } ?? "later"): APNs discarded it.",
                        evidence: [sent] + accepted,
                        fix: "Give pushes that should still arrive an apns-expiration far enough ahead (hours or days); "
                            + "keep 0 only for what is worthless later."))
            }
        }
        // Only a push APNs stored for the device (one with a stated, nonzero expiration) can be coalesced: without
        // the header's value, whether it was stored is unknown, and the answer stays `not_delivered`.
        if let expiration = sent.record.expiration, expiration != 0, let kept = keptInstead(of: sent, facts.input.neighbours) {
            findings.append(
                Finding(
                    .coalescedOffline,
                    "Device \(device) could not be reached when it was sent, and recorded nothing until a later push to it, "
                        + "\(kept.notificationID), sent \(InstantText.format(kept.sentTs)) UTC, which it did record: for a "
                        + "device it cannot reach, APNs stores one notification per app and discards the rest.",
                    evidence: [sent] + accepted,
                    fix: "Do not count on every push reaching an offline device: let the app fetch what it missed when "
                        + "it opens, or fold what matters into the latest push.",
                    related: kept.notificationID))
        }
        return findings
    }

    /// `replaced`: a later notification with the same collapse ID reached the device before this one was expanded.
    static func replacedFindings(_ facts: Facts) -> [Finding] {
        guard let sent = facts.sent, let collapseID = sent.record.collapseKey, let neighbours = facts.input.neighbours,
            let newer = neighbours.laterReached.first(where: { $0.collapseID == collapseID && $0.sentTs > sent.ts })
        else { return [] }
        return [
            Finding(
                .replaced,
                "A later notification with the same apns-collapse-id \"\(collapseID)\", \(newer.notificationID), reached "
                    + "the device at \(InstantText.format(newer.reachedTs)) UTC before this one was expanded: iOS shows only "
                    + "the newest of a collapse ID.",
                evidence: [sent],
                fix: "Give notifications that must each be seen distinct collapse IDs; share one only between updates of "
                    + "the same thing (a score, an order's status).",
                related: newer.notificationID)
        ]
    }

    /// The device's first record after the push: the earliest the store found, or of a later notification it reached.
    private static func firstRecordAfter(_ sent: TimelineEntry, _ neighbours: DeviceNeighbours?) -> Int64? {
        guard let neighbours else { return nil }
        return
            ([neighbours.firstRecordAfterSent].compactMap { $0 }
            + neighbours.laterReached.map(\.reachedTs)).filter { $0 > sent.ts }.min()
    }

    /// The later push APNs kept for the device instead: sent after this one and before the device recorded anything
    /// after this one, and recorded by the device; the last such, as APNs keeps the newest.
    static func keptInstead(of sent: TimelineEntry, _ neighbours: DeviceNeighbours?) -> DeviceNeighbours.Neighbour? {
        guard let neighbours, let back = firstRecordAfter(sent, neighbours) else { return nil }
        return neighbours.laterReached.last { $0.sentTs > sent.ts && $0.sentTs <= back }
    }
}
