import Foundation
import GRDB
import PushTraceCore
import PushTraceStore

extension SQLiteStore {
    /// The alert rules judged as of `now` (epoch milliseconds): notifications first seen after `now` are ignored.
    /// With `appID`, only that app's samples are judged and counted (what a read token of one app may see).
    public func alerts(_ rules: [AlertRule], now: Int64, appID: String?) throws -> AlertReport {
        try RollupReading.alerts(rules, now: now, appID: appID, samples: alertSamples, audience: audienceSamples)
    }

    /// The `notifications_disabled` metric's samples per app (``AudienceReading/alertSamples(_:apps:spans:dictionaries:)``).
    public func audienceSamples(_ spans: AlertSpans, appID: String?) throws -> [AlertSample] {
        try pool.read { db in
            let session = SQLiteSession(db: db)
            return try AudienceReading.alertSamples(session, apps: appID.map { [$0] } ?? AppRows.all(session), spans: spans) {
                [dictionaries] in dictionaries.lookup($0, in: db)
            }
        }
    }

    public func audiences(period: ReportPeriod) throws -> [String: AudienceFigures] {
        try pool.read { db in
            let session = SQLiteSession(db: db)
            return try AudienceReading.figures(session, apps: AppRows.all(session), period: period) { [dictionaries] in
                dictionaries.lookup($0, in: db)
            }
        }
    }

    /// Counts per app and category over settled notifications (``RollupReading/alertSamples(_:hourly:minutely:settled:)``).
    public func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] {
        try pool.read { try RollupReading.alertSamples(spans, SQLiteSession(db: $0)) }
    }
}
