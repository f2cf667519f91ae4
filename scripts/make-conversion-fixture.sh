#!/usr/bin/env bash
# Writes Tests/PushTraceCLITests/Fixtures/blocks-conversion/: a store written by a pushtrace that kept a row per
# record, and that release's own answers about it (why and logs of sampled notifications, search, the weekly report
# and the alerts), for ConversionCLITests to compare with what this release answers after converting the store.
#
#   scripts/make-conversion-fixture.sh PUSHTRACE_BINARY_OF_THE_OLDER_RELEASE
#
# It was run with the binary of commit f29c815 (git worktree add /tmp/prev f29c815; swift build --product pushtrace).
set -euo pipefail
old=$(realpath "$1")
out=$(cd "$(dirname "$0")/.." && pwd)/Tests/PushTraceCLITests/Fixtures/blocks-conversion
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$old" simulate --out sim --seed 29 --notifications 150 --end 2026-11-16T00:00:00Z --incident 2026-11-12T14:00:00Z > /dev/null
"$old" ingest --quiet --db store.sqlite sim
rm -rf "$out" && mkdir -p "$out/answers"
app=$("$old" sql --db store.sqlite --format csv "SELECT app_id FROM notification GROUP BY 1 ORDER BY count(*) DESC LIMIT 1" | tail -1)
# Every cause, and a few of each.
"$old" sql --db store.sqlite --format csv "
    SELECT notification_id FROM (SELECT notification_id, cause, row_number() OVER (PARTITION BY cause ORDER BY notification_id) AS k
                                 FROM notification WHERE app_id = '$app') WHERE k <= 3 ORDER BY cause, notification_id" \
    | tail -n +2 > "$out/answers/notifications.txt"
while read -r id; do
    "$old" why --db store.sqlite --app "$app" --format json "$id" > "$out/answers/why-$id.json"
    "$old" logs --db store.sqlite --app "$app" --format json "$id" > "$out/answers/logs-$id.json"
done < "$out/answers/notifications.txt"
"$old" search --db store.sqlite --app "$app" --format json --limit 1000 > "$out/answers/search.json"
"$old" report --db store.sqlite --app "$app" --week 2026-W46 --format json > "$out/answers/report.json"
# Exit status 1 when an alert fires.
"$old" alerts --db store.sqlite --now 2026-11-12T15:00:00Z --format json > "$out/answers/alerts.json" || [ $? = 1 ]
echo "$app" > "$out/answers/app.txt"
"$old" sql --db store.sqlite --format csv "SELECT count(*) FROM record" | tail -1 > "$out/answers/records.txt"
"$old" --version > "$out/answers/written-by.txt"
sqlite3 store.sqlite "PRAGMA wal_checkpoint(TRUNCATE)" > /dev/null
cp store.sqlite "$out/store.sqlite"
ls -la "$out" "$out/answers" | head -5
echo "records: $(cat "$out/answers/records.txt"), notifications sampled: $(wc -l < "$out/answers/notifications.txt")"
