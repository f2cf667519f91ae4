/// The rollup tables of migrations `v3-rollups` and `v4-minutely`, and the SQL that filled them from the settled
/// summaries, as they shipped, frozen: those migrations once generated it from the rollup definitions, which now
/// live in Swift (`Rollup.contributions`).
enum FrozenRollupSQL {
    /// `v3-rollups`: the daily, hourly, duration and action rollups, created and filled from the settled summaries.
    static let v3Tables = #"""
        CREATE TABLE daily (app_id TEXT NOT NULL, day INTEGER NOT NULL, category TEXT NOT NULL, app_version TEXT NOT NULL, os TEXT NOT NULL, cause TEXT NOT NULL, attachment_failure TEXT NOT NULL, notifications INTEGER NOT NULL, sent INTEGER NOT NULL, apns_accepted INTEGER NOT NULL, device_reached INTEGER NOT NULL, service_ran INTEGER NOT NULL, service_delivered INTEGER NOT NULL, service_timeouts INTEGER NOT NULL, service_crashed INTEGER NOT NULL, content_crashed INTEGER NOT NULL, expanded INTEGER NOT NULL, acted INTEGER NOT NULL, downloads INTEGER NOT NULL, download_bytes INTEGER NOT NULL, attachment_failed INTEGER NOT NULL, size_under_100k INTEGER NOT NULL, size_under_1m INTEGER NOT NULL, size_under_10m INTEGER NOT NULL, size_over_10m INTEGER NOT NULL, example_id TEXT,
            PRIMARY KEY (app_id, day, category, app_version, os, cause, attachment_failure)) WITHOUT ROWID;
        DELETE FROM daily;
        INSERT INTO daily (app_id, day, category, app_version, os, cause, attachment_failure, notifications, sent, apns_accepted, device_reached, service_ran, service_delivered, service_timeouts, service_crashed, content_crashed, expanded, acted, downloads, download_bytes, attachment_failed, size_under_100k, size_under_1m, size_under_10m, size_over_10m, example_id)
        SELECT X.app_id, X.first_ts / 86400000, coalesce(X.category, ''), coalesce(X.app_version, ''), coalesce(X.os, ''), X.cause, coalesce(X.attachment_failure, ''), sum(1), sum(X.sent_ts IS NOT NULL), sum(coalesce(X.apns_status = 200, 0)), sum(X.device_reached), sum(X.service_received), sum(X.service_delivered), sum(X.service_expired), sum(X.service_crashed), sum(X.content_crashed), sum(X.content_received), sum(X.actions > 0 OR X.app_responses > 0), sum(X.downloads), sum(coalesce(X.download_bytes, 0)), sum(X.attachment_failure IS NOT NULL), sum(coalesce(X.download_bytes < 100000, 0)), sum(coalesce(X.download_bytes >= 100000 AND X.download_bytes < 1000000, 0)), sum(coalesce(X.download_bytes >= 1000000 AND X.download_bytes < 10000000, 0)), sum(coalesce(X.download_bytes >= 10000000, 0)), max(X.notification_id)
        FROM notification AS X WHERE X.cause IS NOT NULL AND X.first_ts IS NOT NULL GROUP BY X.app_id, X.first_ts / 86400000, coalesce(X.category, ''), coalesce(X.app_version, ''), coalesce(X.os, ''), X.cause, coalesce(X.attachment_failure, '');
        CREATE TABLE hourly (app_id TEXT NOT NULL, hour INTEGER NOT NULL, category TEXT NOT NULL, cause TEXT NOT NULL, notifications INTEGER NOT NULL, service_ran INTEGER NOT NULL, service_timeouts INTEGER NOT NULL, extension_runs INTEGER NOT NULL, extension_crashes INTEGER NOT NULL, attachment_tries INTEGER NOT NULL, attachment_failures INTEGER NOT NULL,
            PRIMARY KEY (app_id, hour, category, cause)) WITHOUT ROWID;
        DELETE FROM hourly;
        INSERT INTO hourly (app_id, hour, category, cause, notifications, service_ran, service_timeouts, extension_runs, extension_crashes, attachment_tries, attachment_failures)
        SELECT X.app_id, X.first_ts / 3600000, coalesce(X.category, ''), X.cause, sum(1), sum(X.service_received), sum(X.service_expired), sum(X.service_received OR X.content_received OR X.service_crashed OR X.content_crashed), sum(X.service_crashed OR X.content_crashed), sum(X.downloads > 0 OR X.attachment_failure IS NOT NULL), sum(X.attachment_failure IS NOT NULL)
        FROM notification AS X WHERE X.cause IS NOT NULL AND X.first_ts IS NOT NULL GROUP BY X.app_id, X.first_ts / 3600000, coalesce(X.category, ''), X.cause;
        CREATE TABLE daily_duration (app_id TEXT NOT NULL, day INTEGER NOT NULL, ms INTEGER NOT NULL, n INTEGER NOT NULL,
            PRIMARY KEY (app_id, day, ms)) WITHOUT ROWID;
        DELETE FROM daily_duration;
        INSERT INTO daily_duration (app_id, day, ms, n)
        SELECT X.app_id, X.first_ts / 86400000, X.service_ms, sum(1)
        FROM notification AS X WHERE X.cause IS NOT NULL AND X.first_ts IS NOT NULL AND X.service_ms IS NOT NULL GROUP BY X.app_id, X.first_ts / 86400000, X.service_ms;
        CREATE TABLE daily_action (app_id TEXT NOT NULL, day INTEGER NOT NULL, action TEXT NOT NULL, response TEXT NOT NULL, n INTEGER NOT NULL,
            PRIMARY KEY (app_id, day, action, response)) WITHOUT ROWID;
        DELETE FROM daily_action;
        INSERT INTO daily_action (app_id, day, action, response, n)
        SELECT X.app_id, X.first_ts / 86400000, a.action, coalesce(a.response, ''), sum(1)
        FROM notification AS X JOIN notification_action AS a ON a.app_id = X.app_id AND a.notification_id = X.notification_id WHERE X.cause IS NOT NULL AND X.first_ts IS NOT NULL AND X.actions > 0 GROUP BY X.app_id, X.first_ts / 86400000, a.action, coalesce(a.response, '');
        """#
    /// `v4-minutely`: the minute rollup, created and filled.
    static let v4Minutely = #"""
        CREATE TABLE minutely (minute INTEGER NOT NULL, app_id TEXT NOT NULL, category TEXT NOT NULL, notifications INTEGER NOT NULL, service_ran INTEGER NOT NULL, service_timeouts INTEGER NOT NULL, extension_runs INTEGER NOT NULL, extension_crashes INTEGER NOT NULL, attachment_tries INTEGER NOT NULL, attachment_failures INTEGER NOT NULL,
            PRIMARY KEY (minute, app_id, category)) WITHOUT ROWID;
        DELETE FROM minutely;
        INSERT INTO minutely (minute, app_id, category, notifications, service_ran, service_timeouts, extension_runs, extension_crashes, attachment_tries, attachment_failures)
        SELECT X.first_ts / 60000, X.app_id, coalesce(X.category, ''), sum(1), sum(X.service_received), sum(X.service_expired), sum(X.service_received OR X.content_received OR X.service_crashed OR X.content_crashed), sum(X.service_crashed OR X.content_crashed), sum(X.downloads > 0 OR X.attachment_failure IS NOT NULL), sum(X.attachment_failure IS NOT NULL)
        FROM notification AS X WHERE X.cause IS NOT NULL AND X.first_ts IS NOT NULL GROUP BY X.first_ts / 60000, X.app_id, coalesce(X.category, '');
        """#

    /// The failure reason of a download or attachment record `r` as migration `v3-rollups` computed it when it shipped
    /// (10 MiB then). Frozen: the one live definition is `NotificationFacts.failureReason`.
    static let v3AttachmentFailure = """
        CASE
            WHEN json_extract(r.body, '$.error') IS NOT NULL THEN json_extract(r.body, '$.error')
            WHEN r.event = 'service.download' AND json_extract(r.body, '$.http_status') >= 400
                THEN 'HTTP ' || json_extract(r.body, '$.http_status')
            WHEN r.event = 'service.attachment' AND json_extract(r.body, '$.ok') = 0 THEN 'attachment refused'
            WHEN json_extract(r.body, '$.bytes') > 10485760 AND (json_extract(r.body, '$.mime') LIKE 'image/%'
                OR json_extract(r.body, '$.uti') IN ('public.jpeg', 'public.png', 'public.heic', 'com.compuserve.gif'))
                THEN 'image over 10 MB'
        END
        """
}
