#!/usr/bin/env bash
# make demo: simulate realistic bundles, upload them to a local `pushtrace serve` backed by ./pushtrace.sqlite, and
# ask `why` for one notification of every cause family. Run from the repository root after `make release`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=.build/release/pushtrace
load=.build/release/pushtrace-load
db=pushtrace.sqlite
out=demo-bundles
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true' EXIT

rm -rf "$out" "$db" "$db-wal" "$db-shm"
echo "== pushtrace simulate: three apps, their devices, two weeks of pushes, and one campaign gone wrong"
echo "   (2026-11-14 18:00 UTC: a DAILY_PICK push to 300 devices whose image host slows down)"
"$bin" simulate --out "$out" --notifications 600 --seed 42 --incident 2026-11-14T18:00:00Z
echo
echo "== pushtrace serve on 127.0.0.1, storing into $db"
token=$("$bin" token create --db "$db" --scope admin --label demo 2>/dev/null)
port=$(free_port)
server="http://127.0.0.1:$port"
"$bin" serve --db "$db" --port "$port" --log-level warning &
server_pid=$!
wait_healthy "$server" 100 0.05 || { echo "the server did not start" >&2; exit 1; }
echo
echo "== uploading every bundle as the apps would (8 at a time; each file's arrival time replayed)"
PUSHTRACE_TOKEN=$token "$load" --server "$server" --concurrency 8 --replay "$out"
# The server writes notification summaries a moment after their bundles' commits, then settles causes: this script
# reads the file from another process, so it waits until every bundle is summarized and every notification settled.
for _ in $(seq 1 300); do
  [ "$("$bin" sql --db "$db" --format csv "SELECT (SELECT count(*) FROM bundle WHERE summarized = 0)
      + (SELECT count(*) FROM notification WHERE cause IS NULL)" | tail -n 1)" = 0 ] && break
  sleep 0.1
done
echo
echo "== what went wrong, by cause"
"$bin" sql --db "$db" "SELECT cause, count(*) AS notifications FROM notification GROUP BY cause ORDER BY 2 DESC"

example() { # the earliest notification stored with that cause
  "$bin" sql --db "$db" --format csv \
    "SELECT notification_id FROM notification WHERE cause = '$1' ORDER BY first_ts LIMIT 1" | tail -n 1
}
for cause in category_not_handled service_timeout attachment_failed dismissed_before_update apns_rejected not_delivered \
  held_for_summary coalesced_offline ok; do
  id=$(example "$cause")
  echo
  echo "== pushtrace why $id --server $server"
  PUSHTRACE_TOKEN=$token "$bin" why "$id" --server "$server" || true
done
echo
echo "== the weekly delivery report: curl -H 'Accept: text/plain' $server/v1/reports/weekly?app=net.rorklab.dailypick&week=2026-W46"
curl -sf -H "Authorization: Bearer $token" -H 'Accept: text/plain' \
  "$server/v1/reports/weekly?app=net.rorklab.dailypick&week=2026-W46"
echo
echo "== pushtrace alerts --now 2026-11-14T18:30:00Z, half an hour into the campaign (exit status 1: a rule fires)"
"$bin" alerts --db "$db" --now 2026-11-14T18:30:00Z || true
echo
echo "== pushtrace alerts --now 2026-11-15T21:00:00Z, a quiet evening"
"$bin" alerts --db "$db" --now 2026-11-15T21:00:00Z || true
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=""
echo
echo "Try: $bin search --db $db --cause service_timeout    or    $bin sql --db $db \"SELECT …\""
echo "     $bin report --db $db --app io.acme.fitlog --week 2026-W45 --format markdown"
echo "     $bin serve --db $db    then    curl -H 'Authorization: Bearer …' http://127.0.0.1:8080/v1/notifications/ID"
