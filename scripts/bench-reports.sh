#!/usr/bin/env bash
# make bench-reports: `pushtrace report` and `pushtrace alerts` over a store of N notifications (default 10,000,000),
# against their targets (report ≤ 1 s, alerts ≤ 100 ms). Run from the repository root after `make release`.
#
# The store's notification summaries are generated in SQL (three apps, 14 days, the causes at the simulator's
# rates, an action for 40% of notifications) and then settled, which fires the same triggers that keep the rollups
# current at ingest. Reports and alerts read only those summaries and rollups, never raw records, so the store has
# none: generating 60 M records through `ingest` is the scale benchmark's job (make bench). Its devices and their
# config rows (with notification settings) are generated too, for the audience both read.
set -euo pipefail
bin=${BIN:-.build/release/pushtrace}
n=${NOTIFICATIONS:-10000000}
db=${DB:-bench-data/reports-$n.sqlite}
runs=${RUNS:-20}
mkdir -p "$(dirname "$db")"

if [ ! -f "$db" ]; then
  echo "== generating $n settled notifications into $db"
  "$bin" token create --db "$db" --scope admin --label bench >/dev/null 2>&1   # creates the schema (every migration)
  start=$(date +%s)
  sqlite3 "$db" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -1000000;
BEGIN;
-- records carries a roll (0–999) that picks the cause below, as the simulator's weights do.
INSERT INTO notification (app_id, notification_id, device_id, category, app_version, os, first_ts, last_ts, sent_ts,
    apns_status, has_alert, mutable_content, service_received, service_delivered, service_expired, service_ms,
    service_crashed, content_received, content_crashed, actions, app_responses, records, device_reached, downloads,
    download_bytes, attachment_failure)
WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < $n - 1),
r AS (SELECT k, abs(random()) % 1000 AS roll, abs(random()) AS x FROM i)
SELECT
    CASE k % 3 WHEN 0 THEN 'net.rorklab.dailypick' WHEN 1 THEN 'com.example.newsbrief' ELSE 'io.acme.fitlog' END,
    printf('%08x-%04x-4%03x-a%03x-%012x', k, x % 65536, x % 4096, (x / 7) % 4096, x),
    'd-' || (x % 40000),
    CASE x % 5 WHEN 0 THEN 'SECONDARY' WHEN 1 THEN 'SECONDARY' ELSE 'PRIMARY' END,
    CASE (x / 5) % 3 WHEN 0 THEN '2.3.0' WHEN 1 THEN '2.3.1' ELSE '2.4.0' END,
    CASE (x / 15) % 5 WHEN 0 THEN 'iOS 17.6.1' WHEN 1 THEN 'iOS 18.1' WHEN 2 THEN 'iOS 18.2' WHEN 3 THEN 'iOS 18.0.1' ELSE 'iOS 26.0' END,
    1793577600000 + k * (14 * 86400000 / $n), 1793577600000 + k * (14 * 86400000 / $n) + 60000,
    1793577600000 + k * (14 * 86400000 / $n),
    CASE WHEN roll BETWEEN 380 AND 389 THEN 410 ELSE 200 END, 1, 1,
    roll NOT BETWEEN 380 AND 389, roll NOT BETWEEN 380 AND 389,
    roll BETWEEN 330 AND 359,
    CASE WHEN roll BETWEEN 330 AND 359 THEN 29800 + x % 200 ELSE 180 + x % 1420 END,
    roll BETWEEN 360 AND 369, roll < 330 OR roll >= 400, 0,
    CASE WHEN roll >= 600 THEN 1 ELSE 0 END, 0, roll,
    roll NOT BETWEEN 380 AND 389, 1, 90000 + x % 1300000,
    CASE WHEN roll BETWEEN 370 AND 379 THEN CASE x % 3 WHEN 0 THEN 'HTTP 404' WHEN 1 THEN 'image over 10 MB' ELSE 'unrecognized attachment file type' END END
FROM r;
UPDATE notification SET action_list = json_array(json_array(CASE records % 2 WHEN 0 THEN 'SAVE' ELSE 'SHARE' END,
    CASE records % 3 WHEN 0 THEN 'doNotDismiss' WHEN 1 THEN 'dismiss' ELSE 'dismissAndForwardAction' END))
WHERE actions > 0;
COMMIT;
BEGIN;
-- The audience (the report's, and notifications_disabled_rise): each app's 40,000 devices seen over the 14 days,
-- each with two app config records carrying notification settings, a week apart; 8% then 12% disabled. The rows
-- keep their settings summary (SettingsSummary: 1 recorded, 2 nothing shown, 4 provisional, 8 Notification
-- Summary, 16 time-sensitive off), so the one body they share is never read.
INSERT INTO config_body (id, digest, app_group, body) VALUES (1, NULL, NULL, '{"type":"config","ts":0,"process":"app"}');
WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < 39999),
a(app) AS (VALUES ('net.rorklab.dailypick'), ('com.example.newsbrief'), ('io.acme.fitlog'))
INSERT INTO device (app_id, device_id, first_seen, last_seen) SELECT app, 'd-' || k, 1793577600000, 1793577600000 + 14 * 86400000 - 1 FROM a, i;
WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < 39999),
a(app) AS (VALUES ('net.rorklab.dailypick'), ('com.example.newsbrief'), ('io.acme.fitlog')),
w(week, disabled) AS (VALUES (0, 8), (1, 12))
INSERT INTO config (app_id, device_id, process, ts, device_ts, body_ref, settings)
SELECT app, 'd-' || k, 'app', 1793577600000 + (week * 7 + k % 7) * 86400000 + k, NULL, 1,
    1 | (CASE WHEN k % 100 < disabled THEN 2 ELSE 0 END) | (CASE WHEN k % 100 BETWEEN 20 AND 24 THEN 4 ELSE 0 END)
      | (CASE WHEN k % 100 BETWEEN 30 AND 39 THEN 8 ELSE 0 END) | (CASE WHEN k % 100 BETWEEN 40 AND 44 THEN 16 ELSE 0 END)
FROM a, i, w;
-- Each device's latest summary and since when it has held, and the same before, as ingest keeps them
-- (deviceSettingsChanged in Sources/PushTraceStore/SQLSession+BundleRows.swift; no summary here is unknown).
UPDATE device SET settings = coalesce((SELECT c.settings FROM config c
    WHERE c.app_id = device.app_id AND c.device_id = device.device_id AND c.process = 'app' AND c.settings <> 0
    ORDER BY c.ts DESC LIMIT 1), 0);
UPDATE device SET settings_since = (SELECT min(c.ts) FROM config c
    WHERE c.app_id = device.app_id AND c.device_id = device.device_id AND c.process = 'app' AND c.settings = device.settings
        AND c.ts > coalesce((SELECT max(b.ts) FROM config b WHERE b.app_id = device.app_id AND b.device_id = device.device_id
            AND b.process = 'app' AND b.settings <> 0 AND b.settings <> device.settings), -1));
UPDATE device SET previous_settings = coalesce((SELECT c.settings FROM config c
    WHERE c.app_id = device.app_id AND c.device_id = device.device_id AND c.process = 'app' AND c.settings <> 0
        AND c.ts < device.settings_since ORDER BY c.ts DESC LIMIT 1), 0);
UPDATE device SET previous_since = CASE WHEN previous_settings = 0 THEN -1 ELSE (SELECT min(c.ts) FROM config c
    WHERE c.app_id = device.app_id AND c.device_id = device.device_id AND c.process = 'app'
        AND c.settings = device.previous_settings AND c.ts < device.settings_since
        AND c.ts > coalesce((SELECT max(b.ts) FROM config b WHERE b.app_id = device.app_id AND b.device_id = device.device_id
            AND b.process = 'app' AND b.ts < device.settings_since AND b.settings <> 0
            AND b.settings <> device.previous_settings), -1)) END;
COMMIT;
BEGIN;
-- Settling; the rollups are then recomputed from the settled summaries (pushtrace vacuum --rebuild-rollups).
UPDATE notification SET cause = CASE
    WHEN records < 330 THEN 'not_expanded' WHEN records < 360 THEN 'service_timeout'
    WHEN records < 370 THEN 'service_crashed' WHEN records < 380 THEN 'attachment_failed'
    WHEN records < 390 THEN 'apns_rejected' WHEN records < 400 THEN 'completion_not_called' ELSE 'ok' END;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);  -- prints 0|0|0
ANALYZE;
SQL
  "$bin" vacuum --db "$db" --rebuild-rollups
  echo "generated in $(( $(date +%s) - start )) s"
fi
"$bin" sql --db "$db" "SELECT (SELECT count(*) FROM notification) AS notifications, (SELECT count(*) FROM device) AS devices, (SELECT count(*) FROM config) AS config_rows, (SELECT count(*) FROM daily) AS daily_rows, (SELECT count(*) FROM hourly) AS hourly_rows, (SELECT count(*) FROM minutely) AS minutely_rows, (SELECT count(*) FROM daily_duration) AS duration_rows"
echo "database: $(du -h "$db" | cut -f1)"

time_ms() { # median wall time of $runs runs of the command, in ms
  python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
times = []
for _ in range(runs):
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    times.append((time.perf_counter() - start) * 1000)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {done.stderr.decode()}")
times.sort()
print(f"median {times[len(times)//2]:.0f} ms, max {times[-1]:.0f} ms over {runs} runs (whole process: start, open, query, print)")
PY
}
echo "== pushtrace report --app net.rorklab.dailypick --week 2026-W46 --format json   (target ≤ 1 s)"
time_ms "$bin" report --db "$db" --app net.rorklab.dailypick --week 2026-W46 --format json
echo "== pushtrace report (text)"
time_ms "$bin" report --db "$db" --app net.rorklab.dailypick --week 2026-W46
echo "== pushtrace alerts --now 2026-11-15T12:00:00Z   (target ≤ 100 ms)"
time_ms "$bin" alerts --db "$db" --now 2026-11-15T12:00:00Z --format json
