import PushTraceCore
import PushTraceRecords

/// The report's audience (``AudienceFigures``), read the same in every engine: the app's devices whose records span
/// (`device.first_seen` to `last_seen`) meets the period, each with the notification settings of its latest config
/// record that carries them at or before the period's end. Each config body is read once, however many devices
/// share it.
package enum AudienceReading {
    /// `dictionaries` finds a block dictionary by its Adler-32, which config bodies are compressed against.
    package static func audience(
        _ session: some SQLSession, appID: String, period: ReportPeriod, dictionaries: (UInt32) -> [UInt8]?
    ) throws -> [NotificationSettings?] {
        var devices: [String: NotificationSettings?] = [:]
        for row in try session.rows(
            """
            SELECT device_id FROM device
            WHERE app_id = \(appID) AND last_seen >= \(period.start) AND first_seen < \(period.end)
            """)
        {
            devices[try row.decode("device_id")] = .some(nil)
        }
        guard !devices.isEmpty else { return [] }
        // Each device's config records up to the period's end, newest first: the first that carries settings wins.
        var references: [(device: String, body: Int64)] = []
        for row in try session.rows(
            """
            SELECT c.device_id, c.body_ref FROM config c JOIN device d ON d.app_id = c.app_id AND d.device_id = c.device_id
            WHERE d.app_id = \(appID) AND d.last_seen >= \(period.start) AND d.first_seen < \(period.end)
                AND c.ts < \(period.end)
            ORDER BY c.device_id, c.ts DESC
            """)
        {
            references.append((try row.decode("device_id"), try row.decode("body_ref")))
        }
        var settings: [Int64: NotificationSettings?] = [:]
        let bodies = Array(Set(references.map(\.body))).sorted()
        for start in stride(from: 0, to: bodies.count, by: 500) {
            let ids = SQLStatement.joined(bodies[start..<min(start + 500, bodies.count)].map { "\($0)" }, separator: ", ")
            for row in try session.rows("SELECT id, body FROM config_body WHERE id IN (\(ids))") {
                var line = try ConfigBody.text(stored: row.values[row.columns.position(of: "body")!], dictionaries: dictionaries)
                let record = StoredRecord.record(storedBody: &line)
                settings[try row.decode("id")] = record?.notificationSettings.flatMap { $0.isEmpty ? nil : $0 }
            }
        }
        for (device, body) in references {
            guard let found = settings[body] ?? nil, devices[device] == .some(nil) else { continue }
            devices[device] = found
        }
        return devices.keys.sorted().map { devices[$0]! }
    }

    /// Each app's audience in `apps` over `period`; an app with no device active in it is left out.
    package static func figures(
        _ session: some SQLSession, apps: [String], period: ReportPeriod, dictionaries: (UInt32) -> [UInt8]?
    ) throws -> [String: AudienceFigures] {
        var figures: [String: AudienceFigures] = [:]
        for app in apps {
            let devices = try audience(session, appID: app, period: period, dictionaries: dictionaries)
            if !devices.isEmpty { figures[app] = AudienceFigures(devices: devices) }
        }
        return figures
    }

    /// The `notifications_disabled` alert metric's samples (``RateCounts/init(audience:)``), one per app in `apps`
    /// with a device active in the window or the baseline: each span's devices, by their settings at its end.
    package static func alertSamples(
        _ session: some SQLSession, apps: [String], spans: AlertSpans, dictionaries: (UInt32) -> [UInt8]?
    ) throws -> [AlertSample] {
        let window = try figures(
            session, apps: apps, period: ReportPeriod(label: "window", start: spans.windowStart, end: spans.windowEnd),
            dictionaries: dictionaries)
        let baseline = try figures(
            session, apps: apps, period: ReportPeriod(label: "baseline", start: spans.baselineStart, end: spans.baselineEnd),
            dictionaries: dictionaries)
        return Set(window.keys).union(baseline.keys).sorted().map { app in
            AlertSample(
                appID: app, category: "", window: window[app].map(RateCounts.init(audience:)) ?? RateCounts(),
                baseline: baseline[app].map(RateCounts.init(audience:)) ?? RateCounts())
        }
    }
}
