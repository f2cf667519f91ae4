import PushTraceCore

/// Reading the rollups back into the report's and the alerts' inputs, the same in every engine: the engine runs
/// the queries (its SQL, over the same tables), this turns their rows into counts.
package enum RollupReading {
    /// The `daily` columns a report reads: six keys, then the measures ``dailyCounts(keys:measures:)`` takes, in
    /// `Rollup.daily` order.
    package static let dailyColumns =
        "day, category, app_version, os, cause, attachment_failure, "
        + Rollup.daily.measures.joined(separator: ", ")

    /// One `daily` row as the report counts it; `downloadBytes` is clamped by the engine (a sum may pass 2^63).
    package static func dailyCounts(
        day: Int64, category: String, appVersion: String, os: String, cause: String,
        attachmentFailure: String, measures m: [Int]
    ) -> DailyCounts {
        var counts = DeliveryCounts()
        counts.notifications = m[0]
        counts.sent = m[1]
        counts.apnsAccepted = m[2]
        counts.deviceReached = m[3]
        counts.serviceRan = m[4]
        counts.serviceDelivered = m[5]
        counts.serviceTimeouts = m[6]
        counts.serviceCrashed = m[7]
        counts.contentCrashed = m[8]
        counts.expanded = m[9]
        counts.acted = m[10]
        counts.downloads = m[11]
        counts.downloadBytes = m[12]
        counts.attachmentFailed = m[13]
        counts.sizeBands = [m[14], m[15], m[16], m[17]]
        return DailyCounts(
            day: day, category: category, appVersion: appVersion, os: os, cause: cause,
            attachmentFailure: attachmentFailure, counts: counts)
    }

    /// The rollup columns behind `RateCounts`, in the order ``rateCounts(_:)`` reads their sums.
    package static let alertColumns = [
        "service_ran", "service_timeouts", "attachment_tries", "attachment_failures",
        "extension_runs", "extension_crashes",
    ]

    /// Sums of ``alertColumns``, in order.
    package static func rateCounts(_ sums: [Int]) -> RateCounts {
        var counts = RateCounts()
        counts.serviceRan = sums[0]
        counts.serviceTimeouts = sums[1]
        counts.attachmentTries = sums[2]
        counts.attachmentFailures = sums[3]
        counts.extensionRuns = sums[4]
        counts.extensionCrashes = sums[5]
        return counts
    }

    /// One settled notification's rates, as it adds them to the minute rollup.
    package static func rateCounts(_ facts: NotificationFacts) -> RateCounts {
        let measures = RateMeasures(facts).values
        let value = Dictionary(uniqueKeysWithValues: zip(Rollup.rateMeasures, measures.map { Int($0) }))
        return rateCounts(alertColumns.map { value[$0]! })
    }

    /// Rate sums of one app and category (``alertColumns`` order).
    package typealias RateRow = (appID: String, category: String, sums: [Int])

    /// Counts per app and category over settled notifications, for `spans`. The window is exact to the
    /// millisecond: its whole minutes from the minute rollup (`minutely(range)`), the part-minutes at either end
    /// from the settled summaries first seen in them (`settled(start, end)`). The baseline comes from the hourly
    /// rollup (`hourly(range)`: the whole hours inside it, so at most an hour short).
    package static func alertSamples(
        _ spans: AlertSpans,
        hourly: (Range<Int64>) async throws -> [RateRow],
        minutely: (Range<Int64>) async throws -> [RateRow],
        settled: (_ start: Int64, _ end: Int64) async throws -> [(appID: String, facts: NotificationFacts)]
    )
        async rethrows -> [AlertSample]
    {
        let hour: Int64 = 3_600_000, minute: Int64 = 60_000
        let firstMinute = (spans.windowStart + minute - 1) / minute, endMinute = spans.windowEnd / minute
        let minutes = firstMinute < endMinute ? firstMinute..<endMinute : 0..<0
        let edges: [(start: Int64, end: Int64)] =
            minutes.isEmpty
            ? [(spans.windowStart, spans.windowEnd)]
            : [(spans.windowStart, firstMinute * minute), (endMinute * minute, spans.windowEnd)].filter { $0.start < $0.end }
        var samples: [String: AlertSample] = [:]
        func add(_ app: String, _ category: String, window: RateCounts? = nil, baseline: RateCounts? = nil) {
            let key = app + "\u{0}" + category
            var sample = samples[key] ?? AlertSample(appID: app, category: category)
            if let window { sample.window += window }
            if let baseline { sample.baseline += baseline }
            samples[key] = sample
        }
        let firstHour = (spans.baselineStart + hour - 1) / hour, endHour = spans.baselineEnd / hour
        for row in try await hourly(firstHour..<max(firstHour, endHour)) { add(row.appID, row.category, baseline: rateCounts(row.sums)) }
        for row in try await minutely(minutes) { add(row.appID, row.category, window: rateCounts(row.sums)) }
        for edge in edges {
            for (app, facts) in try await settled(edge.start, edge.end) {
                add(app, facts.category ?? "", window: rateCounts(facts))
            }
        }
        return samples.values.sorted { ($0.appID, $0.category) < ($1.appID, $1.category) }
    }

    /// The alert rules judged at `now` over the samples `samples(spans)` gives, or for a rule over devices
    /// `audience(spans, appID)`; with `appID`, only that app's.
    package static func alerts(
        _ rules: [AlertRule], now: Int64, appID: String?,
        samples: (AlertSpans) async throws -> [AlertSample],
        audience: (AlertSpans, _ appID: String?) async throws -> [AlertSample]
    ) async rethrows -> AlertReport {
        var firing: [FiringAlert] = []
        var judged = 0
        var memo: [AlertSpans: [AlertSample]] = [:]
        var audienceMemo: [AlertSpans: [AlertSample]] = [:]
        for rule in rules {
            let spans = AlertSpans(rule: rule, now: now)
            let ruleSamples: [AlertSample]
            if rule.metric.byCategory {
                if memo[spans] == nil { memo[spans] = try await samples(spans).filter { appID == nil || $0.appID == appID } }
                ruleSamples = memo[spans] ?? []
            } else {
                if audienceMemo[spans] == nil { audienceMemo[spans] = try await audience(spans, appID) }
                ruleSamples = audienceMemo[spans] ?? []
            }
            let result = AlertEvaluator.evaluate(rule, samples: ruleSamples, spans: spans)
            firing += result.firing
            judged += result.judged
        }
        return AlertReport(now: now, evaluated: judged, firing: firing)
    }
}
