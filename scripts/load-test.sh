#!/usr/bin/env bash
# make load-test (issue 6): CONCURRENCY uploaders (default 200) against a release `pushtrace serve` on loopback for
# DURATION seconds (default 300), on a corpus simulated with a fixed seed and sent round after round with new bundle IDs.
# Passes when no upload ends in anything but 200 (429s are deliberate backpressure: retried after Retry-After),
# every acknowledged bundle is stored exactly once with all of its records, and nothing else is stored.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release}
SECONDS_TO_RUN=${DURATION:-300}
CONCURRENCY=${CONCURRENCY:-200}
NOTIFICATIONS=${NOTIFICATIONS:-20000}
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(free_port)

"$BIN/pushtrace" simulate --out "$work/bundles" --notifications "$NOTIFICATIONS" --seed 5 >/dev/null
files=$(find "$work/bundles" -name '*.ndjson*' | wc -l)
db="$work/load.sqlite"
token=$("$BIN/pushtrace" token create --db "$db" --scope admin --label load 2>/dev/null)
"$BIN/pushtrace" serve --db "$db" --port "$port" --log-level error 2>"$work/server.log" &
server_pid=$!
wait_healthy "http://127.0.0.1:$port" 100 0.05 || { echo "the server did not start" >&2; exit 1; }
echo "load test: $CONCURRENCY concurrent uploaders for ${SECONDS_TO_RUN}s, $files simulated bundle files (seed 5) sent round after round"
PUSHTRACE_TOKEN=$token "$BIN/pushtrace-load" --server "http://127.0.0.1:$port" --concurrency "$CONCURRENCY" \
    --duration "$SECONDS_TO_RUN" --replay --acked "$work/acked.txt" --format json "$work/bundles" >"$work/summary.json"
peak=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
kill -TERM "$server_pid"; wait "$server_pid" || { echo "the server did not stop cleanly"; cat "$work/server.log"; exit 1; }
server_pid=""

python3 - "$work/summary.json" "$peak" <<'PY'
import json, sys
s, peak = json.load(open(sys.argv[1])), int(sys.argv[2])
print(f"uploads: {s['uploads']} in {s['seconds']:.0f} s; answers {s['statuses']}; retried after 429/503: {s['retries']}")
print(f"throughput: {s['bundles_per_second']:.0f} bundles/s, {s['records_per_second']:.0f} records/s; "
      f"latency of 200s: p50 {s['p50_ms']:.1f} ms, p99 {s['p99_ms']:.1f} ms; server peak RSS {peak / 1024:.1f} MB")
unexpected = {k: v for k, v in s["statuses"].items() if k != "200"}
if unexpected:
    raise SystemExit(f"load test FAILED: uploads that did not end in 200: {unexpected}")
PY
check=$(sqlite3 "$db" <<SQL
CREATE TEMP TABLE acked (app_id TEXT, bundle_id TEXT, accepted INTEGER, duplicate TEXT);
.separator " "
.import $work/acked.txt acked
SELECT (SELECT count(*) FROM acked),
       (SELECT count(*) FROM acked a LEFT JOIN bundle b ON b.app_id = a.app_id AND b.bundle_id = a.bundle_id
        WHERE b.id IS NULL OR b.accepted != a.accepted),
       (SELECT count(*) FROM bundle) - (SELECT count(DISTINCT app_id || ' ' || bundle_id) FROM acked),
       (SELECT coalesce(sum(lines), 0) FROM record_block) - (SELECT sum(accepted) FROM bundle);
SQL
)
read -r acked missing unacknowledged extra <<<"${check//|/ }"
# Every block read back and recounted against its bundle, the index and the summaries.
partial=0
"$BIN/pushtrace" check --db "$db" || partial=1
echo "acknowledged $acked; missing or short $missing; stored but not acknowledged $unacknowledged; partial $partial; records beyond the acknowledged $extra"
if [ "$missing" != 0 ] || [ "$unacknowledged" != 0 ] || [ "$partial" != 0 ] || [ "$extra" != 0 ]; then
    echo "load test FAILED"; exit 1
fi
echo "load test passed: no error, every acknowledged bundle stored once"
