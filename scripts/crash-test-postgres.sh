#!/usr/bin/env bash
# Crash test on PostgreSQL (issue 30), run beside scripts/with-postgres.sh: two `pushtrace serve` processes on one
# database take uploads at once (a fifth of the bundles sent to both), while one of them is killed with SIGKILL
# (ROUNDS rounds, default 20) or PostgreSQL itself is restarted with `pg_ctl restart -m immediate` (RESTARTS rounds,
# default 3; the servers are not restarted: they answer 503 while it is down and reconnect). After each round every
# acknowledged bundle must be stored exactly once with all its lines, none partially; every summary must count its
# stored lines, and every rollup must equal a recount from the settled summaries.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
: "${PUSHTRACE_TEST_POSTGRES:?run me through scripts/with-postgres.sh (make crash-test-postgres does)}"
ROUNDS=${ROUNDS:-20}
RESTARTS=${RESTARTS:-3}
BIN=${BIN:-.build/debug}
NOTIFICATIONS=${NOTIFICATIONS:-3000}
CONCURRENCY=${CONCURRENCY:-8}
# An upload run that takes longer than this has hung: the round fails (its uploads are counted unacknowledged).
LOAD_SECONDS=${LOAD_SECONDS:-600}
pushtrace="$BIN/pushtrace"
load="$BIN/pushtrace-load"
psql="$PGBIN/psql"
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

start_server() { # url port: sets $started, the server's pid (a child of this shell, so that `wait` gives its status)
    "$pushtrace" serve --db "$1" --port "$2" --log-level error >/dev/null 2>>"$work/server.log" &
    started=$!
    wait_healthy "http://127.0.0.1:$2" 200 0.05 && return 0
    echo "the server did not start" >&2; cat "$work/server.log" >&2; exit 1
}

sql() { "$psql" "$1" -Atq -v ON_ERROR_STOP=1 -c "$2"; }

"$pushtrace" simulate --out "$work/bundles" --notifications "$NOTIFICATIONS" --seed 7 >/dev/null
# Half the files to each server; every fifth to both (the same bundle at two servers at once).
mkdir -p "$work/a" "$work/b"
index=0
while IFS= read -r file; do
    name=$(echo "${file#"$work/bundles/"}" | tr '/' '_')
    if [ $((index % 5)) = 0 ]; then cp -p "$file" "$work/a/$name"; cp -p "$file" "$work/b/$name"
    elif [ $((index % 2)) = 0 ]; then cp -p "$file" "$work/a/$name"
    else cp -p "$file" "$work/b/$name"; fi
    index=$((index + 1))
done < <(find "$work/bundles" -name '*.ndjson*' | sort)
files=$index
echo "crash test (PostgreSQL): $ROUNDS rounds killing one of two servers, $RESTARTS restarting PostgreSQL;" \
    "$files bundle files, $CONCURRENCY uploaders per server"

completed=0
total=$((ROUNDS + RESTARTS))
for round in $(seq 1 "$total"); do
    kind=kill; [ "$round" -gt "$ROUNDS" ] && kind=restart
    name="crash_$round"
    url=$(python3 - "$PUSHTRACE_TEST_POSTGRES" "$name" <<'PY'
import sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1]); print(urllib.parse.urlunsplit(u._replace(path="/" + sys.argv[2])))
PY
)
    sql "$PUSHTRACE_TEST_POSTGRES" "CREATE DATABASE $name"
    token=$("$pushtrace" token create --db "$url" --scope admin 2>/dev/null)
    port_a=$(free_port); port_b=$(free_port)
    start_server "$url" "$port_a"; pid_a=$started
    start_server "$url" "$port_b"; pid_b=$started
    pids=("$pid_a" "$pid_b")
    : >"$work/acked-a"; : >"$work/acked-b"
    PUSHTRACE_TOKEN=$token timeout "$LOAD_SECONDS" "$load" --server "http://127.0.0.1:$port_a" --concurrency "$CONCURRENCY" --replay \
        --acked "$work/acked-a" --format json "$work/a" >"$work/load-a.json" 2>"$work/load-a.err" &
    load_a=$!
    PUSHTRACE_TOKEN=$token timeout "$LOAD_SECONDS" "$load" --server "http://127.0.0.1:$port_b" --concurrency "$CONCURRENCY" --replay \
        --acked "$work/acked-b" --format json "$work/b" >"$work/load-b.json" 2>"$work/load-b.err" &
    load_b=$!
    delay=$(python3 -c "import random; print(round(random.uniform(0.3, 1.5), 2))")
    sleep "$delay"
    if [ "$kind" = kill ]; then
        kill -9 "$pid_a"; wait "$pid_a" 2>/dev/null || true
        what="server A killed after ${delay}s"
    else
        as_owner "$PGBIN/pg_ctl" -D "$PUSHTRACE_TEST_POSTGRES_DATA" -m immediate -w restart >/dev/null
        what="PostgreSQL restarted (immediate) after ${delay}s"
    fi
    status_a=0; status_b=0
    wait "$load_a" || status_a=$?
    wait "$load_b" || status_b=$?
    for status in "$status_a" "$status_b"; do
        [ "$status" != 124 ] || echo "round $round: an upload run did not end within ${LOAD_SECONDS}s" >&2
    done
    acknowledged=$(cat "$work/acked-a" "$work/acked-b" | wc -l)
    # Every upload to a server that stayed up must have been acknowledged in the end (through a restart of
    # PostgreSQL, after its 503s): server B always, server A unless it was killed.
    unacknowledged=$(( $(find "$work/b" -type f | wc -l) - $(wc -l <"$work/acked-b") ))
    [ "$status_b" = 0 ] || unacknowledged=$((unacknowledged + 1000000))
    if [ "$kind" = restart ]; then
        unacknowledged=$(( unacknowledged + $(find "$work/a" -type f | wc -l) - $(wc -l <"$work/acked-a") ))
        [ "$status_a" = 0 ] || unacknowledged=$((unacknowledged + 1000000))
    fi
    retried=$(python3 -c "import json,sys; print(sum(json.load(open(p)).get('retries', 0) for p in sys.argv[1:]))" \
        "$work/load-a.json" "$work/load-b.json" 2>/dev/null || echo "?")
    # A killed server is started again; a restarted database was reconnected to by the servers still running.
    if [ "$kind" = kill ]; then start_server "$url" "$port_a"; pid_a=$started; fi
    pids=("$pid_a" "$pid_b")
    # Let the servers settle what they can, then stop them.
    for _ in $(seq 1 100); do
        [ "$(sql "$url" "SELECT count(*) FROM notification WHERE cause IS NULL")" = 0 ] && break
        sleep 0.1
    done
    stop_within "$pid_a" || { echo "round $round: server A did not stop cleanly within 60 s"; exit 1; }
    stop_within "$pid_b" || { echo "round $round: server B did not stop cleanly within 60 s"; exit 1; }
    pids=()

    cat "$work/acked-a" "$work/acked-b" | awk '{print $1 "\t" $2 "\t" $3}' >"$work/acked.tsv"
    missing=$("$psql" "$url" -Atq -v ON_ERROR_STOP=1 <<SQL
CREATE TEMP TABLE acked (app_id text, bundle_id text, accepted bigint);
\copy acked FROM '$work/acked.tsv'
SELECT count(*) FROM acked a LEFT JOIN bundle b ON b.app_id = a.app_id AND b.bundle_id = a.bundle_id
WHERE b.id IS NULL OR b.accepted != a.accepted;
SQL
)
    twice=$(sql "$url" "SELECT count(*) FROM (SELECT 1 FROM bundle GROUP BY app_id, bundle_id HAVING count(*) > 1) t")
    rejected_short=$(sql "$url" "SELECT count(*) FROM bundle b
        LEFT JOIN (SELECT bundle_ref, count(*) AS n FROM rejected_line GROUP BY bundle_ref) j ON j.bundle_ref = b.id
        WHERE coalesce(j.n, 0) != b.rejected")
    check=$("$pushtrace" check --db "$url" --format json || true)
    if ! python3 -c "import json,sys; json.loads(sys.argv[1])" "$check" 2>/dev/null; then
        echo "round $round FAILED: pushtrace check gave no answer: $check"; exit 1
    fi
    field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['$1'])" "$check"; }
    partial=$(( rejected_short + $(field miscounted_bundles) + $(field unreadable_blocks) + $(field unindexed_lines) ))
    orphans=$(field orphan_blocks)
    miscounted=$(field miscounted_notifications)
    # The rollups kept as notifications were settled and unsettled, against a recount from the settled summaries.
    # Rows whose every count is 0 (a notification that moved to another cause) are left out: a recount has none.
    dump() {
        for table in daily hourly minutely daily_duration daily_action; do
            sql "$url" "SELECT (to_jsonb(t) - 'example_id')::text FROM $table t"
        done | python3 -c '
import json, sys
keys = {"day", "hour", "minute", "ms"}
rows = [json.loads(line) for line in sys.stdin if line.strip()]
kept = [r for r in rows if any(isinstance(v, int) and k not in keys and v != 0 for k, v in r.items())]
for r in sorted(json.dumps(r, sort_keys=True) for r in kept): print(r)'
    }
    dump >"$work/rollups-kept"
    "$pushtrace" vacuum --db "$url" --rebuild-rollups >/dev/null
    dump >"$work/rollups-recounted"
    if cmp -s "$work/rollups-kept" "$work/rollups-recounted"; then rollups_off=0
    else rollups_off=$(diff "$work/rollups-kept" "$work/rollups-recounted" | grep -c '^[<>]' || true); fi
    stored=$(sql "$url" "SELECT count(*) FROM bundle")
    distinct=$(find "$work/bundles" -name '*.ndjson*' | wc -l)

    echo "round $round ($what): $acknowledged acknowledged ($retried uploads retried after 429/503), $stored stored;" \
        "unacknowledged at a live server $unacknowledged, missing $missing, stored twice $twice, partial $partial, orphan blocks $orphans, miscounted summaries $miscounted," \
        "rollup rows off $rollups_off"
    if [ "$acknowledged" = 0 ] || [ "$unacknowledged" != 0 ] || [ "$missing" != 0 ] || [ "$twice" != 0 ] || [ "$partial" != 0 ] || [ "$orphans" != 0 ] || [ "$miscounted" != 0 ] \
        || [ "$rollups_off" != 0 ] || [ "$stored" -gt "$distinct" ]; then
        echo "round $round FAILED"; tail -n 20 "$work/server.log"; diff "$work/rollups-kept" "$work/rollups-recounted" | head; exit 1
    fi
    sql "$PUSHTRACE_TEST_POSTGRES" "DROP DATABASE $name WITH (FORCE)"
    completed=$((completed + 1))
done
if [ "$completed" != "$total" ]; then echo "crash test FAILED: $completed of $total rounds completed"; exit 1; fi
echo "crash test (PostgreSQL) passed: $completed of $total rounds ($ROUNDS server kills, $RESTARTS PostgreSQL restarts)"
