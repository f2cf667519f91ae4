import Foundation
import GRDB
import PushTraceCore

extension Store {
    /// Evaluates `rules` as of `now` (epoch milliseconds): notifications first seen after `now` are ignored.
    public func alerts(_ rules: [AlertRule], now: Int64) throws -> AlertReport {
        var firing: [FiringAlert] = []
        var judged = 0
        var samples: [AlertSpans: [AlertSample]] = [:]
        for rule in rules {
            let spans = AlertSpans(rule: rule, now: now)
            if samples[spans] == nil { samples[spans] = try alertSamples(spans) }
            let result = AlertEvaluator.evaluate(rule, samples: samples[spans] ?? [], spans: spans)
            firing += result.firing
            judged += result.judged
        }
        return AlertReport(now: now, evaluated: judged, firing: firing)
    }

    /// Counts per app and category: the window from the notifications themselves (exact to the millisecond), the
    /// baseline from the hourly rollup (the whole hours inside it, so at most an hour short).
    func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] {
        let hour: Int64 = 3_600_000
        var samples: [String: AlertSample] = [:]
        func key(_ app: String, _ category: String) -> String { app + "\u{0}" + category }
        let apps = try pool.read { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT app_id, category, sum(service_ran), sum(service_timeouts), sum(attachment_tries),
                    sum(attachment_failures), sum(extension_runs), sum(extension_crashes)
                FROM hourly WHERE hour >= ? AND hour < ? GROUP BY app_id, category
                """, arguments: [(spans.baselineStart + hour - 1) / hour, spans.baselineEnd / hour]) {
                var sample = AlertSample(appID: row[0], category: row[1])
                sample.baseline = Self.rateCounts(row, from: 2)
                samples[key(sample.appID, sample.category)] = sample
            }
            return try appIDs(db)
        }
        // The window reads every notification of the last hour: one app per concurrent reader.
        let windows = ConcurrentResults<[(category: String, counts: RateCounts)]>(count: apps.count)
        DispatchQueue.concurrentPerform(iterations: apps.count) { index in
            windows.store(index, Result {
                try pool.read { db in
                    try Row.fetchAll(db, sql: """
                        SELECT coalesce(category, ''), sum(service_received), sum(service_expired),
                            sum(downloads > 0 OR attachment_failure IS NOT NULL), sum(attachment_failure IS NOT NULL),
                            sum(service_received OR content_received OR service_crashed OR content_crashed),
                            sum(service_crashed OR content_crashed)
                        FROM notification INDEXED BY notification_by_time
                        WHERE app_id = ? AND first_ts >= ? AND first_ts < ? GROUP BY 1
                        """, arguments: [apps[index], spans.windowStart, spans.windowEnd]).map { ($0[0], Self.rateCounts($0, from: 1)) }
                }
            })
        }
        for (app, rows) in zip(apps, try windows.all()) {
            for (category, counts) in rows {
                samples[key(app, category), default: AlertSample(appID: app, category: category)].window = counts
            }
        }
        return samples.values.sorted { ($0.appID, $0.category) < ($1.appID, $1.category) }
    }

    private static func rateCounts(_ row: Row, from start: Int) -> RateCounts {
        var counts = RateCounts()
        counts.serviceRan = row[start]
        counts.serviceTimeouts = row[start + 1]
        counts.attachmentTries = row[start + 2]
        counts.attachmentFailures = row[start + 3]
        counts.extensionRuns = row[start + 4]
        counts.extensionCrashes = row[start + 5]
        return counts
    }
}
