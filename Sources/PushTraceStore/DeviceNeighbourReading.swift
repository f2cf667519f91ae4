import PushTraceCore
import PushTraceRecords

extension DiagnosisSource {
    /// The device's notifications that APNs's delivery rules read for one sent after `sentAfter` (``DeviceNeighbours``),
    /// the same in every engine: those of the same app sent to the same device within ``neighbourWindowMs`` after it
    /// that the device's records mention (`device_reached`), the first ``neighbourLimit`` by the time they were sent,
    /// each read from its stored lines for its collapse ID and the time the device first recorded it.
    ///
    /// The device's first record after the push is taken among those notifications' records: a device's records
    /// that mention no later push (its logs, its config) do not say APNs could reach it.
    package func neighbours(appID: String, deviceID: String, sentAfter: Int64) async throws -> DeviceNeighbours {
        let session = neighbourSession
        let until = WireBounds.clampedEpoch(sentAfter) + neighbourWindowMs
        let keys = try await session.rows(
            """
            SELECT notification_id FROM notification\(unsafeRaw: session.dialect.indexedBy("notification_by_device"))
            WHERE app_id = \(appID) AND device_id = \(deviceID) AND device_reached = 1
                AND sent_ts > \(sentAfter) AND sent_ts <= \(until)
            ORDER BY sent_ts LIMIT \(Int64(neighbourLimit))
            """
        ).map { NotificationRowKey(appID: appID, notificationID: try $0.decode("notification_id")) }
        guard !keys.isEmpty else { return DeviceNeighbours(firstRecordAfterSent: nil, laterReached: []) }
        var first: Int64?
        var reached: [DeviceNeighbours.Neighbour] = []
        for (key, lines) in zip(keys, try await lines(of: keys)) {
            let events = lines.filter { $0.record.recordType == .event }
            let deviceTimes = events.filter { $0.deviceID == deviceID }.compactMap(\.ts)
            guard let sent = events.first(where: { $0.record.eventName == .pushSent && $0.deviceID == nil }),
                let sentTs = sent.ts, let reachedTs = deviceTimes.min()
            else { continue }
            if let after = deviceTimes.filter({ $0 > sentAfter }).min() { first = min(first ?? after, after) }
            reached.append(
                DeviceNeighbours.Neighbour(
                    notificationID: key.notificationID, sentTs: sentTs, collapseID: sent.record.collapseKey,
                    reachedTs: reachedTs))
        }
        return DeviceNeighbours(firstRecordAfterSent: first, laterReached: reached)
    }

    /// How long after a push the device's later notifications are looked at: longer than APNs keeps a notification
    /// for a device it cannot reach.
    package var neighbourWindowMs: Int64 { DeviceNeighbourWindow.milliseconds }
    /// The most later notifications read.
    package var neighbourLimit: Int { 20 }
}

/// How long after a push the device's later notifications are read for APNs's rules (``DiagnosisSource/neighbours``),
/// and how long before a notification with a collapse ID the ones it may have replaced are settled again.
package enum DeviceNeighbourWindow {
    package static let milliseconds: Int64 = 30 * 86_400_000
}
