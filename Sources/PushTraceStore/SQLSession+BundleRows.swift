import PushTraceRecords

extension SQLSession {
    /// Records that a bundle came from the app's device: its first and last corrected times widen to cover the
    /// bundle's, and what the manifest says of the app and the OS is the latest known.
    package func deviceSeen(appID: String, deviceID: String, firstSeen: Int64, lastSeen: Int64, manifest: Manifest) throws {
        try execute(
            """
            INSERT INTO device (app_id, device_id, first_seen, last_seen, app_version, os, device_model)
            VALUES (\(appID), \(deviceID), \(firstSeen), \(lastSeen), \(manifest.appVersion), \(manifest.os), \(manifest.deviceModel))
            ON CONFLICT (app_id, device_id) DO UPDATE SET
                first_seen = \(unsafeRaw: dialect.least)(device.first_seen, excluded.first_seen),
                last_seen = \(unsafeRaw: dialect.greatest)(device.last_seen, excluded.last_seen),
                app_version = coalesce(excluded.app_version, device.app_version),
                os = coalesce(excluded.os, device.os),
                device_model = coalesce(excluded.device_model, device.device_model)
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
            try execute("INSERT INTO rejected_line (bundle_ref, line, reason, raw) VALUES \(SQLStatement.joined(rows, separator: ", "))")
        }
    }
}
