import PushTraceRecords

/// What one or more bundles of a group say of their device (``SQLSession/devicesSeen(_:)``).
package struct DeviceVisit: Sendable {
    package var appID: String
    package var deviceID: String
    package var first: Int64
    package var last: Int64
    package var appVersion: String?
    package var os: String?
    package var deviceModel: String?

    package init(
        appID: String, deviceID: String, first: Int64, last: Int64, appVersion: String?, os: String?, deviceModel: String?
    ) {
        (self.appID, self.deviceID, self.first, self.last) = (appID, deviceID, first, last)
        (self.appVersion, self.os, self.deviceModel) = (appVersion, os, deviceModel)
    }

    /// This visit followed by a later bundle's: the times widen, and what the later one says wins.
    package mutating func add(_ later: DeviceVisit) {
        first = min(first, later.first)
        last = max(last, later.last)
        appVersion = later.appVersion ?? appVersion
        os = later.os ?? os
        deviceModel = later.deviceModel ?? deviceModel
    }
}

extension SQLSession {
    /// Records that a bundle came from the app's device: its first and last corrected times widen to cover the
    /// bundle's, and what the manifest says of the app and the OS is the latest known.
    package func deviceSeen(appID: String, deviceID: String, firstSeen: Int64, lastSeen: Int64, manifest: Manifest) throws {
        try devicesSeen([
            DeviceVisit(
                appID: appID, deviceID: deviceID, first: firstSeen, last: lastSeen, appVersion: manifest.appVersion,
                os: manifest.os, deviceModel: manifest.deviceModel)
        ])
    }

    /// ``deviceSeen(appID:deviceID:firstSeen:lastSeen:manifest:)`` of several devices, many to a statement (the
    /// dialect's ``SQLDialect/rowsPerUpsert``), in the order given; a device appears once.
    package func devicesSeen(_ visits: [DeviceVisit]) throws {
        let dialect = self.dialect
        var batch = UpsertBatch { rows in
            """
            INSERT INTO device (app_id, device_id, first_seen, last_seen, app_version, os, device_model, settings)
            VALUES \(rows.dialect.valueLists(columns: 8, rows: rows.count))
            ON CONFLICT (app_id, device_id) DO UPDATE SET
                first_seen = \(dialect.least)(device.first_seen, excluded.first_seen),
                last_seen = \(dialect.greatest)(device.last_seen, excluded.last_seen),
                app_version = coalesce(excluded.app_version, device.app_version),
                os = coalesce(excluded.os, device.os),
                device_model = coalesce(excluded.device_model, device.device_model)
            """
        }
        for visit in visits {
            try batch.add(
                [
                    .text(visit.appID), .text(visit.deviceID), .integer(visit.first), .integer(visit.last),
                    visit.appVersion.sqlValue, visit.os.sqlValue, visit.deviceModel.sqlValue, .integer(0),
                ], to: self)
        }
        try batch.flush(to: self)
    }

    /// Brings the device's settings summaries up to date after its bundle stored app config records that carry
    /// settings (docs/schema.md#device): the summary of its latest such record (NULL when that one was stored
    /// before records kept a summary) and the time of the earliest record since which every one has had it; then
    /// the same of the records before that time (`previous_settings` 0 and `previous_since` the smallest time when
    /// there are none). All are recomputed from the device's config rows, so a record arriving late, older than the
    /// latest, counts as much as one arriving in order. Each statement reads what the one before it wrote.
    package func deviceSettingsChanged(appID: String, deviceID: String) throws {
        let app = ProcessKind.app.rawValue
        let device: SQLStatement = "app_id = \(appID) AND device_id = \(deviceID)"
        let records: SQLStatement =
            "c.app_id = device.app_id AND c.device_id = device.device_id AND c.process = \(app)"
        let breakers: SQLStatement =
            "b.app_id = device.app_id AND b.device_id = device.device_id AND b.process = \(app)"
        // The latest record carrying settings, or whose summary is unknown (-1, then NULL); 0 when there is none.
        try send(
            """
            UPDATE device SET settings = nullif(coalesce((
                SELECT coalesce(c.settings, -1) FROM config c
                WHERE \(records) AND (c.settings IS NULL OR c.settings <> 0) ORDER BY c.ts DESC LIMIT 1), 0), -1)
            WHERE \(device)
            """)
        try send(
            """
            UPDATE device SET settings_since = (
                SELECT min(c.ts) FROM config c
                WHERE \(records) AND c.settings = device.settings AND c.ts > coalesce((
                    SELECT max(b.ts) FROM config b
                    WHERE \(breakers) AND (b.settings IS NULL OR (b.settings <> 0 AND b.settings <> device.settings))),
                    \(Int64.min)))
            WHERE \(device)
            """)
        try send(
            """
            UPDATE device SET previous_settings = CASE WHEN settings_since IS NULL THEN NULL ELSE nullif(coalesce((
                SELECT coalesce(c.settings, -1) FROM config c
                WHERE \(records) AND (c.settings IS NULL OR c.settings <> 0) AND c.ts < device.settings_since
                ORDER BY c.ts DESC LIMIT 1), 0), -1) END
            WHERE \(device)
            """)
        try send(
            """
            UPDATE device SET previous_since = CASE WHEN previous_settings = 0 THEN \(Int64.min) ELSE (
                SELECT min(c.ts) FROM config c
                WHERE \(records) AND c.settings = device.previous_settings AND c.ts < device.settings_since
                    AND c.ts > coalesce((
                        SELECT max(b.ts) FROM config b
                        WHERE \(breakers) AND b.ts < device.settings_since
                            AND (b.settings IS NULL OR (b.settings <> 0 AND b.settings <> device.previous_settings))),
                        \(Int64.min))) END
            WHERE \(device)
            """)
    }

    /// Stores the bundle's kept rejected lines, many to a statement: a bundle of bad lines costs a few statements
    /// whatever its size (``RejectedLineBatch`` bounds what is kept).
    package func storeRejectedLines(_ batch: RejectedLineBatch, bundleRef: Int64) throws {
        // Four values a line: a statement stays well under either engine's limit on bound values.
        for start in stride(from: 0, to: batch.lines.count, by: 250) {
            let rows = batch.lines[start..<min(start + 250, batch.lines.count)].map { line -> SQLStatement in
                "(\(bundleRef), \(line.line), \(line.reason), \(SQLBytes(line.raw)))"
            }
            try send("INSERT INTO rejected_line (bundle_ref, line, reason, raw) VALUES \(SQLStatement.joined(rows, separator: ", "))")
        }
    }
}
