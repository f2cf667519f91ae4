#!/usr/bin/env bash
# make attack-test: a hostile-client suite against a live release server (docs/security.md). Every attack has its
# expected answer; after each, the server must be alive (/healthz 200) and store an honest upload from another app.
# Memory is read from /proc while 50 hostile connections hold uploads open, and again after they close.
#
#   scripts/attack-test.sh            every attack, on an SQLite store
#   scripts/with-postgres.sh scripts/attack-test.sh postgres
#                                     the attacks on the store's own bounds, on the throwaway PostgreSQL
#
# ATTACKS=TEXT runs only the attacks whose name holds TEXT. Run from the repository root after `make release`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
engine=${1:-sqlite}
bin=${BIN:-.build/release/pushtrace}
budget_mib=${BUDGET_MIB:-128}
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(free_port)
case "$engine" in
  sqlite) db="$work/pushtrace.sqlite" ;;
  postgres) db=${PUSHTRACE_TEST_POSTGRES:?run it through scripts/with-postgres.sh} ;;
  *) echo "attack-test: the engine is sqlite or postgres, not $engine" >&2; exit 2 ;;
esac

token() { "$bin" token create --db "$db" "$@" 2>/dev/null; }
ingest_a=$(token --scope ingest --app net.example.hostile --label attacker)
ingest_b=$(token --scope ingest --app net.example.honest --label honest)
read_a=$(token --scope read --app net.example.hostile --label reader)
admin=$(token --scope admin --label operator)
metrics=$(token --scope metrics --label prometheus)
others=()
for n in 1 2 3 4; do others+=("$(token --scope ingest --app "net.example.other$n")"); done

"$bin" serve --db "$db" --port "$port" --upload-budget-mib "$budget_mib" --alert-interval 1 \
  2> "$work/server.log" &
server=$!
pids+=($server)
wait_healthy "http://127.0.0.1:$port" || { cat "$work/server.log" >&2; exit 1; }

python3 scripts/attack-test.py --engine "$engine" --only "${ATTACKS:-}" --port "$port" --pid "$server" --log "$work/server.log" --db "$db" \
  --bin "$bin" --budget-mib "$budget_mib" --ingest-a "$ingest_a" --ingest-b "$ingest_b" --read-a "$read_a" \
  --admin "$admin" --metrics "$metrics" --others "${others[@]}"
