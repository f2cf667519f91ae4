#!/usr/bin/env bash
# make demo: simulate realistic bundles, ingest them into ./pushtrace.sqlite, and ask `why` for one notification
# of every cause family. Run from the repository root after `make release`.
set -euo pipefail
bin=.build/release/pushtrace
db=pushtrace.sqlite
out=demo-bundles

rm -rf "$out" "$db" "$db-wal" "$db-shm"
echo "== pushtrace simulate: three apps, their devices, two weeks of pushes"
"$bin" simulate --out "$out" --notifications 600 --seed 42
echo
echo "== pushtrace ingest: every bundle into $db"
"$bin" ingest --db "$db" --quiet "$out"
echo
echo "== what went wrong, by cause"
"$bin" sql --db "$db" "SELECT cause, count(*) AS notifications FROM notification GROUP BY cause ORDER BY 2 DESC"

example() { # the earliest notification stored with that cause
  "$bin" sql --db "$db" --format csv \
    "SELECT notification_id FROM notification WHERE cause = '$1' ORDER BY first_ts LIMIT 1" | tail -n 1
}
for cause in category_not_handled service_timeout attachment_failed dismissed_before_update apns_rejected not_delivered ok; do
  id=$(example "$cause")
  echo
  echo "== pushtrace why $id"
  "$bin" why --db "$db" "$id" || true
done
echo
echo "Try: $bin search --db $db --cause service_timeout    or    $bin sql --db $db \"SELECT …\""
