import PushTraceRecords

/// A table of counts over the settled notification summaries, so that reports and alerts read a few thousand rows
/// however many notifications are stored.
///
/// A notification counts in the rollups once its cause is settled, with the facts it was settled on: settling adds
/// its ``contributions(of:)``, and new records (which mark it unsettled again) take them out until it is settled
/// anew. What a notification contributes is computed here, in Swift, and only here; the writers collect the deltas
/// in ``RollupDeltas`` and write them as upserts. Retention may delete notifications; the rollups keep their counts.
package struct Rollup: Sendable {
    /// The table's name.
    package let table: String
    /// The grouping columns, in primary-key order.
    package let keys: [String]
    /// The counted columns.
    package let measures: [String]
    /// Whether the table keeps the latest notification added to a row (`example_id`, a notification to run `why` on).
    package var keepsExample = false

    /// Every rollup.
    package static let all = [daily, hourly, dailyDuration, dailyAction, minutely]

    /// The report's counts per app, UTC day, category, app version, OS, cause and attachment failure reason.
    package static let daily = Rollup(
        table: "daily", keys: ["app_id", "day", "category", "app_version", "os", "cause", "attachment_failure"],
        measures: [
            "notifications", "sent", "apns_accepted", "device_reached", "service_ran", "service_delivered",
            "service_timeouts", "service_crashed", "content_crashed", "expanded", "acted", "downloads",
            "download_bytes", "attachment_failed", "size_under_100k", "size_under_1m", "size_under_10m",
            "size_over_10m",
        ],
        keepsExample: true)

    /// The alerts' counts (and the server's notifications-by-cause gauge) per app, UTC hour, category and cause.
    package static let hourly = Rollup(table: "hourly", keys: ["app_id", "hour", "category", "cause"], measures: rateMeasures)

    /// The alerts' window counts per UTC minute, app and category (minute first: the window is a range of minutes
    /// across every app).
    package static let minutely = Rollup(table: "minutely", keys: ["minute", "app_id", "category"], measures: rateMeasures)

    /// Service-extension durations per app and day, one row per distinct millisecond value: exact nearest-rank
    /// percentiles without reading the notifications.
    package static let dailyDuration = Rollup(table: "daily_duration", keys: ["app_id", "day", "ms"], measures: ["n"])

    /// Content-extension actions per app, day (of their notification), action and response option.
    package static let dailyAction = Rollup(table: "daily_action", keys: ["app_id", "day", "action", "response"], measures: ["n"])

    /// The measures of `hourly` and `minutely`, in ``RateMeasures`` order.
    package static let rateMeasures = [
        "notifications", "service_ran", "service_timeouts", "extension_runs", "extension_crashes",
        "attachment_tries", "attachment_failures",
    ]
}

/// A rollup key value: an integer (a day, an hour, a millisecond count) or a text.
package enum RollupValue: Hashable, Sendable {
    case integer(Int64)
    case text(String)
}

/// One row of one rollup that a settled notification counts in, and what it adds there.
package struct RollupContribution {
    package var rollup: Rollup
    package var key: [RollupValue]
    package var measures: [Int64]
}

/// The rates the alerts judge, as one notification contributes them to `hourly` and `minutely`.
package struct RateMeasures {
    package var values: [Int64]

    package init(_ facts: NotificationFacts) {
        let attachmentFailed = facts.attachmentFailure != nil
        values = [
            1, Self.flag(facts.serviceReceived), Self.flag(facts.serviceExpired),
            Self.flag(facts.serviceReceived || facts.contentReceived || facts.serviceCrashed || facts.contentCrashed),
            Self.flag(facts.serviceCrashed || facts.contentCrashed),
            Self.flag(facts.downloads > 0 || attachmentFailed), Self.flag(attachmentFailed),
        ]
    }

    package static func flag(_ value: Bool) -> Int64 { value ? 1 : 0 }
}

extension Rollup {
    /// Every rollup row a notification settled as `cause` counts in, with what it adds to each: the one definition
    /// of the rollups.
    package static func contributions(
        appID: String, notificationID: String, facts: NotificationFacts,
        cause: String
    ) -> [RollupContribution] {
        guard let first = facts.firstTs else { return [] }
        let flag = RateMeasures.flag
        let day = RollupValue.integer(first / 86_400_000), category = RollupValue.text(facts.category ?? "")
        let app = RollupValue.text(appID)
        let bytes = facts.downloadBytes
        // Download sizes in the report's bands; the top band starts at Apple's image attachment limit.
        let top = AttachmentKind.image.maxBytes
        var result = [
            RollupContribution(
                rollup: .daily,
                key: [
                    app, day, category, .text(facts.appVersion ?? ""), .text(facts.os ?? ""),
                    .text(cause), .text(facts.attachmentFailure ?? ""),
                ],
                measures: [
                    1, flag(facts.sentTs != nil), flag(facts.apnsStatus == 200), flag(facts.deviceIDFromDevice),
                    flag(facts.serviceReceived), flag(facts.serviceDelivered), flag(facts.serviceExpired),
                    flag(facts.serviceCrashed), flag(facts.contentCrashed), flag(facts.contentReceived),
                    flag(facts.actions > 0 || facts.appResponses > 0), Int64(facts.downloads), bytes ?? 0,
                    flag(facts.attachmentFailure != nil), flag(bytes.map { $0 < 100_000 } ?? false),
                    flag(bytes.map { $0 >= 100_000 && $0 < 1_000_000 } ?? false),
                    flag(bytes.map { $0 >= 1_000_000 && $0 < top } ?? false), flag(bytes.map { $0 >= top } ?? false),
                ]),
            RollupContribution(
                rollup: .hourly, key: [app, .integer(first / 3_600_000), category, .text(cause)],
                measures: RateMeasures(facts).values),
            RollupContribution(
                rollup: .minutely, key: [.integer(first / 60_000), app, category],
                measures: RateMeasures(facts).values),
        ]
        if let ms = facts.serviceMs {
            result.append(RollupContribution(rollup: .dailyDuration, key: [app, day, .integer(ms)], measures: [1]))
        }
        if facts.actions > 0 {
            for action in facts.actionRows {
                result.append(
                    RollupContribution(
                        rollup: .dailyAction,
                        key: [
                            app, day, .text(action.action ?? ""),
                            .text(action.response ?? ""),
                        ], measures: [1]))
            }
        }
        return result
    }
}

/// Rollup deltas collected over a transaction (settling adds, unsettling takes away), summed per row and written
/// once per row at its end, in the order rows were first touched.
package final class RollupDeltas {
    private struct RowKey: Hashable {
        var table: String
        var key: [RollupValue]
    }

    private var index: [RowKey: Int] = [:]
    private var rows: [(rollup: Rollup, key: [RollupValue], measures: [Int64], example: String?)] = []

    package init() {}

    package var isEmpty: Bool { rows.isEmpty }

    /// Adds (`sign` 1) or takes away (`sign` -1) the contributions of a notification settled as `cause`.
    package func add(appID: String, notificationID: String, facts: NotificationFacts, cause: String, sign: Int64) {
        for contribution in Rollup.contributions(appID: appID, notificationID: notificationID, facts: facts, cause: cause) {
            let rowKey = RowKey(table: contribution.rollup.table, key: contribution.key)
            let at: Int
            if let existing = index[rowKey] {
                at = existing
            } else {
                at = rows.count
                index[rowKey] = at
                rows.append((contribution.rollup, contribution.key, Array(repeating: 0, count: contribution.measures.count), nil))
            }
            for (offset, value) in contribution.measures.enumerated() {
                rows[at].measures[offset] = NotificationFacts.sum(rows[at].measures[offset], sign * value)
            }
            if sign > 0, contribution.rollup.keepsExample { rows[at].example = notificationID }
        }
    }

    /// The summed deltas, in the order rows were first touched.
    package var all: [(rollup: Rollup, key: [RollupValue], measures: [Int64], example: String?)] { rows }

    package func removeAll() {
        rows.removeAll()
        index.removeAll()
    }
}
