import Foundation
import PushTraceStore
import GRDB
import PushTraceCore

extension SQLiteStore {
    /// Evaluates `rules` as of `now` (epoch milliseconds): notifications first seen after `now` are ignored.
    /// The alert rules judged as of `now`; with `appID`, only that app's samples are judged and counted (what a
    /// read token of one app may see).
    public func alerts(_ rules: [AlertRule], now: Int64, appID: String?) throws -> AlertReport {
        var firing: [FiringAlert] = []
        var judged = 0
        var samples: [AlertSpans: [AlertSample]] = [:]
        for rule in rules {
            let spans = AlertSpans(rule: rule, now: now)
            if samples[spans] == nil { samples[spans] = try alertSamples(spans).filter { appID == nil || $0.appID == appID } }
            let result = AlertEvaluator.evaluate(rule, samples: samples[spans] ?? [], spans: spans)
            firing += result.firing
            judged += result.judged
        }
        return AlertReport(now: now, evaluated: judged, firing: firing)
    }

    /// Counts per app and category over settled notifications. The window is exact to the millisecond: its whole
    /// minutes from the minute rollup, the part-minutes at either end from the notifications themselves. The
    /// baseline comes from the hourly rollup (the whole hours inside it, so at most an hour short).
    public func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] {
        let hour: Int64 = 3_600_000, minute: Int64 = 60_000
        let firstMinute = (spans.windowStart + minute - 1) / minute, endMinute = spans.windowEnd / minute
        let minutes = firstMinute < endMinute ? firstMinute..<endMinute : 0..<0
        // The part-minutes at the ends (or the whole window when it holds no whole minute).
        let edges: [(start: Int64, end: Int64)] = minutes.isEmpty
            ? [(spans.windowStart, spans.windowEnd)]
            : [(spans.windowStart, firstMinute * minute), (endMinute * minute, spans.windowEnd)].filter { $0.start < $0.end }
        var samples: [String: AlertSample] = [:]
        func add(_ row: Row, window: Bool) {
            let app: String = row[0], category: String = row[1]
            var sample = samples[app + "\u{0}" + category] ?? AlertSample(appID: app, category: category)
            if window { sample.window += Self.rateCounts(row, from: 2) } else { sample.baseline += Self.rateCounts(row, from: 2) }
            samples[app + "\u{0}" + category] = sample
        }
        try pool.read { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT app_id, category, \(Self.alertSums)
                FROM hourly WHERE hour >= ? AND hour < ? GROUP BY app_id, category
                """, arguments: [(spans.baselineStart + hour - 1) / hour, spans.baselineEnd / hour]) {
                add(row, window: false)
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT app_id, category, \(Self.alertSums)
                FROM minutely WHERE minute >= ? AND minute < ? GROUP BY app_id, category
                """, arguments: [minutes.lowerBound, minutes.upperBound]) {
                add(row, window: true)
            }
            // The part-minutes: each settled notification's rates, as it adds them to the minute rollup.
            for app in try appIDs(db) {
                for edge in edges {
                    let rows = try Row.fetchCursor(db, sql: """
                        SELECT \(NotificationFacts.columns) FROM notification INDEXED BY notification_by_time
                        WHERE app_id = ? AND first_ts >= ? AND first_ts < ? AND cause IS NOT NULL
                        """, arguments: [app, edge.start, edge.end])
                    while let row = try rows.next() {
                        let facts = NotificationFacts(stored: row)
                        let category = facts.category ?? ""
                        var sample = samples[app + "\u{0}" + category] ?? AlertSample(appID: app, category: category)
                        sample.window += Self.rateCounts(RateMeasures(facts))
                        samples[app + "\u{0}" + category] = sample
                    }
                }
            }
        }
        return samples.values.sorted { ($0.appID, $0.category) < ($1.appID, $1.category) }
    }

    /// The rollup columns behind `RateCounts`, in the order `rateCounts(_:from:)` reads them.
    private static let alertColumns = ["service_ran", "service_timeouts", "attachment_tries", "attachment_failures",
                                       "extension_runs", "extension_crashes"]
    private static let alertSums = alertColumns.map { "sum(\($0))" }.joined(separator: ", ")

    /// One notification's rates (``RateMeasures``, in `Rollup.rateMeasures` order) as `RateCounts`.
    private static func rateCounts(_ measures: RateMeasures) -> RateCounts {
        let value = Dictionary(uniqueKeysWithValues: zip(Rollup.rateMeasures, measures.values.map { Int($0) }))
        var counts = RateCounts()
        counts.serviceRan = value["service_ran"]!
        counts.serviceTimeouts = value["service_timeouts"]!
        counts.attachmentTries = value["attachment_tries"]!
        counts.attachmentFailures = value["attachment_failures"]!
        counts.extensionRuns = value["extension_runs"]!
        counts.extensionCrashes = value["extension_crashes"]!
        return counts
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
