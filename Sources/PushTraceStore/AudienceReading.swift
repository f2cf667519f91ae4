import PushTraceCore
import PushTraceRecords

/// The report's audience (``AudienceFigures``), read the same in every engine: the app's devices whose records span
/// (`device.first_seen` to `last_seen`) meets the period, each with the notification settings of its latest app
/// config record that carries them at or before the period's end.
///
/// A config row keeps what the audience counts of its settings (`config.settings`, a ``SettingsSummary``), and a
/// device row its latest (`device.settings`) and the time since which every app config record carrying settings has
/// had it (`settings_since`), and the same of the records before (`previous_settings`, `previous_since`), kept by
/// ``SQLSession/deviceSettingsChanged(appID:deviceID:)``. So a device whose settings changed at most once after
/// the period's end is counted from its row alone, in one grouped query; only the others read their config rows. Rows stored before these columns existed have NULL there: their devices
/// read their config rows, and those rows their bodies, once however many devices share one.
package enum AudienceReading {
    /// The app's audience over each of `periods`, read in one pass over its devices (a report's week and the week
    /// before; an alert's window and baseline). `dictionaries` finds a block dictionary by its Adler-32, which
    /// config bodies are compressed against.
    package static func audiences(
        _ session: some SQLSession, appID: String, periods: [ReportPeriod], dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> [AudienceFigures] {
        guard let from = periods.map(\.start).min(), let to = periods.map(\.end).max() else { return [] }
        var figures = Array(repeating: AudienceFigures(), count: periods.count)
        var unknown = Array(repeating: 0, count: periods.count)
        // Per period: its active devices, those whose latest settings held before its end, and those whose
        // settings before those did.
        let counts = SQLStatement.joined(
            periods.enumerated().map { index, period -> SQLStatement in
                let active = Self.active(period)
                return """
                    count(*) FILTER (WHERE \(active)) AS devices_\(unsafeRaw: String(index)),
                    count(*) FILTER (WHERE \(active) AND (\(Self.current(period)))) AS current_\(unsafeRaw: String(index)),
                    count(*) FILTER (WHERE \(active) AND \(Self.previous(period))) AS previous_\(unsafeRaw: String(index))
                    """
            }, separator: ", ")
        for row in try await session.rows(
            """
            SELECT settings, previous_settings, \(counts) FROM device
            WHERE app_id = \(appID) AND last_seen >= \(from) AND first_seen < \(to)
            GROUP BY settings, previous_settings
            """)
        {
            for index in periods.indices {
                let devices: Int = try row.decode("devices_\(index)"), current: Int = try row.decode("current_\(index)")
                let previous: Int = try row.decode("previous_\(index)")
                if current > 0 { figures[index].add(SettingsSummary(rawValue: try row.decode("settings")), devices: current) }
                if previous > 0 {
                    figures[index].add(SettingsSummary(rawValue: try row.decode("previous_settings")), devices: previous)
                }
                unknown[index] += devices - current - previous
            }
        }
        for (index, period) in periods.enumerated() where unknown[index] > 0 {
            var others: [String] = []
            for row in try await session.rows(
                """
                SELECT device_id FROM device
                WHERE app_id = \(appID) AND \(Self.active(period))
                    AND NOT (CASE WHEN \(Self.current(period)) THEN 1 WHEN \(Self.previous(period)) THEN 1 ELSE 0 END = 1)
                """)
            {
                others.append(try row.decode("device_id"))
            }
            for start in stride(from: 0, to: others.count, by: 500) {
                for summary in try await configSummaries(
                    session, appID: appID, devices: others[start..<min(start + 500, others.count)], before: period.end,
                    dictionaries: dictionaries)
                {
                    figures[index].add(summary, devices: 1)
                }
            }
        }
        return figures
    }

    /// A device whose records span meets the period.
    private static func active(_ period: ReportPeriod) -> SQLStatement {
        "last_seen >= \(period.start) AND first_seen < \(period.end)"
    }

    /// A device whose row tells its settings at the period's end: none ever, or its latest held before then.
    private static func current(_ period: ReportPeriod) -> SQLStatement {
        "settings = 0 OR (settings > 0 AND settings_since < \(period.end))"
    }

    /// A device whose settings before its latest held at the period's end.
    private static func previous(_ period: ReportPeriod) -> SQLStatement {
        """
        settings > 0 AND settings_since >= \(period.end) AND previous_settings IS NOT NULL \
        AND previous_since < \(period.end)
        """
    }

    /// The summaries of `devices`' latest app config records carrying settings before `end`, read from their config
    /// rows (empty for a device with none).
    private static func configSummaries(
        _ session: some SQLSession, appID: String, devices: ArraySlice<String>, before end: Int64,
        dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> [SettingsSummary] {
        var summaries = Dictionary(uniqueKeysWithValues: devices.map { ($0, SettingsSummary?.none) })
        let ids = SQLStatement.joined(devices.map { id -> SQLStatement in "\(id)" }, separator: ", ")
        // Each device's app config rows before the end that may carry settings, newest first: the first that does
        // wins.
        var rows: [(device: String, body: Int64, summary: Int64?)] = []
        for row in try await session.rows(
            """
            SELECT device_id, body_ref, settings FROM config
            WHERE app_id = \(appID) AND device_id IN (\(ids)) AND process = \(ProcessKind.app.rawValue) AND ts < \(end)
                AND (settings IS NULL OR settings <> 0)
            ORDER BY device_id, ts DESC
            """)
        {
            rows.append((try row.decode("device_id"), try row.decode("body_ref"), try row.decode("settings")))
        }
        let unsummarised = try await bodySummaries(session, Set(rows.filter { $0.summary == nil }.map(\.body)), dictionaries: dictionaries)
        for (device, body, stored) in rows where summaries[device] == .some(nil) {
            let summary = stored.map(SettingsSummary.init(rawValue:)) ?? unsummarised[body] ?? []
            if summary.contains(.recorded) { summaries[device] = summary }
        }
        return summaries.values.map { $0 ?? [] }
    }

    /// The settings summaries of config bodies stored before rows kept them, read from the bodies.
    private static func bodySummaries(
        _ session: some SQLSession, _ bodies: Set<Int64>, dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> [Int64: SettingsSummary] {
        var summaries: [Int64: SettingsSummary] = [:]
        let sorted = bodies.sorted()
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let ids = SQLStatement.joined(sorted[start..<min(start + 500, sorted.count)].map { "\($0)" }, separator: ", ")
            for row in try await session.rows("SELECT id, body FROM config_body WHERE id IN (\(ids))") {
                var line = try ConfigBody.text(stored: row.values[row.columns.position(of: "body")!], dictionaries: dictionaries)
                summaries[try row.decode("id")] = SettingsSummary(StoredRecord.record(storedBody: &line)?.notificationSettings)
            }
        }
        return summaries
    }

    /// Each app's audience in `apps` over each of `periods`; an app with no device active in any is left out.
    package static func figures(
        _ session: some SQLSession, apps: [String], periods: [ReportPeriod], dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> [String: [AudienceFigures]] {
        var figures: [String: [AudienceFigures]] = [:]
        for app in apps {
            let audiences = try await audiences(session, appID: app, periods: periods, dictionaries: dictionaries)
            if audiences.contains(where: { $0.devices > 0 }) { figures[app] = audiences }
        }
        return figures
    }

    /// Each app's audience in `apps` over `period`; an app with no device active in it is left out.
    package static func figures(
        _ session: some SQLSession, apps: [String], period: ReportPeriod, dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> [String: AudienceFigures] {
        try await figures(session, apps: apps, periods: [period], dictionaries: dictionaries).mapValues { $0[0] }
    }

    /// The `notifications_disabled` alert metric's samples (``RateCounts/init(audience:)``), one per app in `apps`
    /// with a device active in the window or the baseline: each span's devices, by their settings at its end.
    package static func alertSamples(
        _ session: some SQLSession, apps: [String], spans: AlertSpans, dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> [AlertSample] {
        let periods = [
            ReportPeriod(label: "window", start: spans.windowStart, end: spans.windowEnd),
            ReportPeriod(label: "baseline", start: spans.baselineStart, end: spans.baselineEnd),
        ]
        return try await figures(session, apps: apps, periods: periods, dictionaries: dictionaries).sorted { $0.key < $1.key }
            .map { app, audiences in
                AlertSample(
                    appID: app, category: "", window: RateCounts(audience: audiences[0]),
                    baseline: RateCounts(audience: audiences[1]))
            }
    }
}
