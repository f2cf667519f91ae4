#!/usr/bin/env bash
# Crash test (issue 3): many concurrent clients upload bundles and record which ones got 200; the server is killed
# with SIGKILL at a random moment, restarted, and every acknowledged bundle must be stored exactly once with all of
# its records, no partial bundle may exist, and the notification summaries, which the server writes a moment after
# each commit (and a restarted server rebuilds from the records), must count exactly the stored records. ROUNDS rounds (default 20); BIN is the folder of the built executables.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-20}
BIN=${BIN:-.build/debug}
NOTIFICATIONS=${NOTIFICATIONS:-3000}
CONCURRENCY=${CONCURRENCY:-16}
# An upload run that takes longer than this has hung.
LOAD_SECONDS=${LOAD_SECONDS:-600}
pushtrace="$BIN/pushtrace"
load="$BIN/pushtrace-load"
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT


start_server() { # db port
    "$pushtrace" serve --db "$1" --port "$2" --log-level error 2>>"$work/server.log" &
    server_pid=$!
    wait_healthy "http://127.0.0.1:$2" 100 0.05 && return 0
    echo "the server did not start"; cat "$work/server.log"; exit 1
}

"$pushtrace" simulate --out "$work/bundles" --notifications "$NOTIFICATIONS" --seed 7 >/dev/null
files=$(find "$work/bundles" -name '*.ndjson*' | wc -l)
echo "crash test: $ROUNDS rounds, $files bundle files, $CONCURRENCY concurrent uploaders, SIGKILL at a random moment"

completed=0
for round in $(seq 1 "$ROUNDS"); do
    db="$work/round-$round.sqlite"
    acked="$work/acked-$round.txt"
    : >"$acked"
    token=$("$pushtrace" token create --db "$db" --scope admin 2>/dev/null)
    port=$(free_port)
    start_server "$db" "$port"
    PUSHTRACE_TOKEN=$token timeout "$LOAD_SECONDS" "$load" --server "http://127.0.0.1:$port" --concurrency "$CONCURRENCY" --replay \
        --acked "$acked" "$work/bundles" >"$work/load-$round.txt" 2>&1 &
    load_pid=$!
    delay=$(python3 -c "import random; print(round(random.uniform(0.2, 1.5), 2))")
    sleep "$delay"
    kill -9 "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    wait "$load_pid" || true
    acknowledged=$(wc -l <"$acked")
    # Bundles committed whose summaries the killed server had not written yet: the restart must write them.
    left=$(sqlite3 "$db" "SELECT count(*) FROM bundle WHERE summarized = 0")

    # Restart on the same file: it must open and recover.
    start_server "$db" "$port"
    stop_within "$server_pid" || { echo "round $round: the restarted server did not stop cleanly within 60 s"; exit 1; }
    server_pid=""

    missing=$(sqlite3 "$db" <<SQL
CREATE TEMP TABLE acked (app_id TEXT, bundle_id TEXT, accepted INTEGER, duplicate TEXT);
.separator " "
.import $acked acked
SELECT count(*) FROM acked a LEFT JOIN bundle b ON b.app_id = a.app_id AND b.bundle_id = a.bundle_id
WHERE b.id IS NULL OR b.accepted != a.accepted;
SQL
)
    twice=$(sqlite3 "$db" "SELECT count(*) FROM (SELECT 1 FROM bundle GROUP BY app_id, bundle_id HAVING count(*) > 1)")
    # Rejected lines per bundle from SQL; the accepted lines are in compressed blocks, which `pushtrace check` reads
    # back and recounts: per bundle, per notification summary, and through the index.
    rejected_short=$(sqlite3 "$db" "
        SELECT count(*) FROM bundle b
        LEFT JOIN (SELECT bundle_ref, count(*) AS n FROM rejected_line GROUP BY bundle_ref) j ON j.bundle_ref = b.id
        WHERE coalesce(j.n, 0) != b.rejected")
    # `check` exits 1 when it finds something inconsistent (counted below); no JSON at all fails the round.
    check=$("$pushtrace" check --db "$db" --format json || true)
    if ! python3 -c "import json,sys; json.loads(sys.argv[1])" "$check" 2>/dev/null; then
        echo "round $round FAILED: pushtrace check gave no answer: $check"; exit 1
    fi
    field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['$1'])" "$check"; }
    bundles_off=$(field miscounted_bundles); unreadable=$(field unreadable_blocks); unindexed=$(field unindexed_lines)
    partial=$(( rejected_short + bundles_off + unreadable + unindexed ))
    orphans=$(field orphan_blocks)
    miscounted=$(field miscounted_notifications)
    stored=$(sqlite3 "$db" "SELECT count(*) FROM bundle")
    unsummarized=$(sqlite3 "$db" "SELECT count(*) FROM bundle WHERE summarized = 0")

    # Upload everything again: the acknowledged come back as duplicates, the rest is stored, once.
    start_server "$db" "$port"
    PUSHTRACE_TOKEN=$token timeout "$LOAD_SECONDS" "$load" --server "http://127.0.0.1:$port" --concurrency "$CONCURRENCY" --replay \
        --format json "$work/bundles" >"$work/reload-$round.json" \
        || { echo "round $round: the second upload failed or did not end within ${LOAD_SECONDS}s"; exit 1; }
    stop_within "$server_pid" || true
    server_pid=""
    final=$(sqlite3 "$db" "SELECT count(*) FROM bundle")

    echo "round $round: killed after ${delay}s; $acknowledged acknowledged, $stored stored; missing $missing," \
        "stored twice $twice, partial $partial, orphan blocks $orphans; $left bundles' summaries" \
        "left unwritten, after restart miscounted $miscounted, unsummarized $unsummarized; after re-upload $final of $files"
    if [ "$missing" != 0 ] || [ "$twice" != 0 ] || [ "$partial" != 0 ] || [ "$orphans" != 0 ] || [ "$miscounted" != 0 ] \
        || [ "$unsummarized" != 0 ] || [ "$final" != "$files" ]; then
        echo "round $round FAILED"; tail -n 20 "$work/server.log"; exit 1
    fi
    rm -f "$db" "$db-wal" "$db-shm" "$db-summaries"
    completed=$((completed + 1))
done
# A round abandoned by the shell (an expansion error ends the loop, not the script) must not pass for one.
if [ "$completed" != "$ROUNDS" ]; then echo "crash test FAILED: $completed of $ROUNDS rounds completed"; exit 1; fi
echo "crash test passed: $completed of $ROUNDS rounds"
