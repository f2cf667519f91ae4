import GRDB

/// A table of counts over the per-notification summary, kept current by triggers, so that reports and alerts read
/// a few thousand rows however many notifications are stored.
///
/// A notification counts in the rollups once its cause is settled, with the facts it was settled on: settling adds
/// it, and new records (which mark it unsettled again) take it out until it is settled anew. Retention may delete
/// notifications; the rollups keep their counts.
struct Rollup {
    /// The table's name.
    let table: String
    /// Grouping columns and their SQL over a notification row `X` (a trigger's `NEW`/`OLD`, or `n`).
    let keys: [(column: String, sql: String)]
    /// Counted columns and the SQL of one notification's contribution.
    let measures: [(column: String, sql: String)]
    /// A column that keeps the latest notification added (an example to run `why` on), not a count.
    var latest: (column: String, sql: String)? = nil
    /// A further table joined to the notification (for `daily_action`), with the condition that joins it.
    var join: (table: String, on: String)? = nil
    /// Only notifications matching this condition contribute.
    var condition = "X.first_ts IS NOT NULL"

    /// Every rollup, in the order their tables are created.
    static let all = [daily, hourly, dailyDuration, dailyAction, minutely]

    private static let day = "X.first_ts / 86400000"

    /// The report's counts per app, UTC day, category, app version, OS, cause and attachment failure reason.
    static let daily = Rollup(
        table: "daily",
        keys: [("app_id", "X.app_id"), ("day", day), ("category", "coalesce(X.category, '')"),
               ("app_version", "coalesce(X.app_version, '')"), ("os", "coalesce(X.os, '')"), ("cause", "X.cause"),
               ("attachment_failure", "coalesce(X.attachment_failure, '')")],
        measures: [
            ("notifications", "1"), ("sent", "X.sent_ts IS NOT NULL"), ("apns_accepted", "coalesce(X.apns_status = 200, 0)"),
            ("device_reached", "X.device_reached"), ("service_ran", "X.service_received"),
            ("service_delivered", "X.service_delivered"), ("service_timeouts", "X.service_expired"),
            ("service_crashed", "X.service_crashed"), ("content_crashed", "X.content_crashed"),
            ("expanded", "X.content_received"), ("acted", "X.actions > 0 OR X.app_responses > 0"),
            ("downloads", "X.downloads"), ("download_bytes", "coalesce(X.download_bytes, 0)"),
            ("attachment_failed", "X.attachment_failure IS NOT NULL"),
            ("size_under_100k", "coalesce(X.download_bytes < 100000, 0)"),
            ("size_under_1m", "coalesce(X.download_bytes >= 100000 AND X.download_bytes < 1000000, 0)"),
            ("size_under_10m", "coalesce(X.download_bytes >= 1000000 AND X.download_bytes < 10000000, 0)"),
            ("size_over_10m", "coalesce(X.download_bytes >= 10000000, 0)"),
        ],
        latest: ("example_id", "X.notification_id"))

    /// The alerts' counts (and the server's notifications-by-cause gauge) per app, UTC hour, category and cause.
    static let hourly = Rollup(
        table: "hourly",
        keys: [("app_id", "X.app_id"), ("hour", "X.first_ts / 3600000"), ("category", "coalesce(X.category, '')"),
               ("cause", "X.cause")],
        measures: [
            ("notifications", "1"), ("service_ran", "X.service_received"), ("service_timeouts", "X.service_expired"),
            ("extension_runs", "X.service_received OR X.content_received OR X.service_crashed OR X.content_crashed"),
            ("extension_crashes", "X.service_crashed OR X.content_crashed"),
            ("attachment_tries", "X.downloads > 0 OR X.attachment_failure IS NOT NULL"),
            ("attachment_failures", "X.attachment_failure IS NOT NULL"),
        ])

    /// The alerts' window counts per UTC minute, app and category (minute first: the window is a range of minutes
    /// across every app).
    static let minutely = Rollup(
        table: "minutely",
        keys: [("minute", "X.first_ts / 60000"), ("app_id", "X.app_id"), ("category", "coalesce(X.category, '')")],
        measures: hourly.measures)

    /// Service-extension durations per app and day, one row per distinct millisecond value: exact nearest-rank
    /// percentiles without reading the notifications.
    static let dailyDuration = Rollup(
        table: "daily_duration",
        keys: [("app_id", "X.app_id"), ("day", day), ("ms", "X.service_ms")],
        measures: [("n", "1")],
        condition: "X.first_ts IS NOT NULL AND X.service_ms IS NOT NULL")

    /// Content-extension actions per app, day (of their notification), action and response option.
    static let dailyAction = Rollup(
        table: "daily_action",
        keys: [("app_id", "X.app_id"), ("day", day), ("action", "a.action"), ("response", "coalesce(a.response, '')")],
        measures: [("n", "1")],
        join: ("notification_action", "a.app_id = X.app_id AND a.notification_id = X.notification_id"),
        condition: "X.first_ts IS NOT NULL AND X.actions > 0")

    var createTableSQL: String {
        let integerKeys: Set = ["day", "hour", "minute", "ms"]
        let keyColumns = keys.map { "\($0.column) \(integerKeys.contains($0.column) ? "INTEGER" : "TEXT") NOT NULL" }
        let measureColumns = measures.map { "\($0.column) INTEGER NOT NULL" } + (latest.map { ["\($0.column) TEXT"] } ?? [])
        return """
            CREATE TABLE \(table) (\((keyColumns + measureColumns).joined(separator: ", ")),
                PRIMARY KEY (\(keys.map(\.column).joined(separator: ", ")))) WITHOUT ROWID
            """
    }

    /// The upsert that adds (`sign` 1) or removes (`sign` -1) the contribution of notification `row` (`NEW`, `OLD`).
    ///
    /// One notification is one row of contributions, so no aggregate is needed, except for a joined table (several
    /// actions of one notification may share a key): a `GROUP BY` makes SQLite build a sorter at every execution,
    /// which dominated the cost of settling a cause.
    func upsertSQL(row: String, sign: Int) -> String {
        let key = keys.map(\.column).joined(separator: ", ")
        let minus = sign < 0 ? "-" : ""
        var columns = measures.map(\.column)
        var values = keys.map(\.sql) + measures.map { join == nil ? "\(minus)(\($0.sql))" : "\(minus)sum(\($0.sql))" }
        var updates = measures.map { "\($0.column) = \($0.column) + excluded.\($0.column)" }
        if let latest, sign > 0 {
            columns.append(latest.column)
            values.append(join == nil ? latest.sql : "max(\(latest.sql))")
            updates.append("\(latest.column) = excluded.\(latest.column)")
        }
        let from = join.map { " FROM \($0.table) AS a WHERE \($0.on) AND " } ?? " WHERE "
        let groupBy = join == nil ? "" : " GROUP BY \(keys.map(\.sql).joined(separator: ", "))"
        return """
            INSERT INTO \(table) (\(key), \(columns.joined(separator: ", ")))
            SELECT \(values.joined(separator: ", "))\(from)\(condition)\(groupBy)
            ON CONFLICT (\(key)) DO UPDATE SET \(updates.joined(separator: ", "))
            """.replacingOccurrences(of: "X.", with: "\(row).")
    }

    /// Recomputes the table from every settled notification.
    var rebuildSQL: String {
        let key = keys.map(\.column).joined(separator: ", ")
        let from = join.map { "notification AS X JOIN \($0.table) AS a ON \($0.on)" } ?? "notification AS X"
        let columns = measures.map(\.column) + (latest.map { [$0.column] } ?? [])
        let values = keys.map(\.sql) + measures.map { "sum(\($0.sql))" } + (latest.map { ["max(\($0.sql))"] } ?? [])
        return """
            DELETE FROM \(table);
            INSERT INTO \(table) (\(key), \(columns.joined(separator: ", ")))
            SELECT \(values.joined(separator: ", "))
            FROM \(from) WHERE X.cause IS NOT NULL AND \(condition) GROUP BY \(keys.map(\.sql).joined(separator: ", "))
            """
    }

    /// The triggers that keep `rollups` current as causes are settled and unsettled.
    static func triggersSQL(_ rollups: [Rollup]) -> String {
        """
        CREATE TRIGGER rollup_add AFTER UPDATE OF cause ON notification WHEN NEW.cause IS NOT NULL BEGIN
            \(rollups.map { $0.upsertSQL(row: "NEW", sign: 1) + ";" }.joined(separator: "\n    "))
        END;
        CREATE TRIGGER rollup_remove AFTER UPDATE OF cause ON notification WHEN OLD.cause IS NOT NULL BEGIN
            \(rollups.map { $0.upsertSQL(row: "OLD", sign: -1) + ";" }.joined(separator: "\n    "))
        END;
        """
    }
}
