#!/usr/bin/env bash
# make attack-test: a hostile-client suite against a live release server (docs/security.md). Every attack has its
# expected answer; after each, the server must be alive (/healthz 200) and store an honest upload from another app.
# Memory is read from /proc while 50 hostile connections hold uploads open, and again after they close.
# Run from the repository root after `make release`.
set -euo pipefail
bin=${BIN:-.build/release/pushtrace}
budget_mib=${BUDGET_MIB:-128}
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
db="$work/pushtrace.sqlite"

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
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

python3 scripts/attack-test.py --port "$port" --pid "$server" --log "$work/server.log" --db "$db" --bin "$bin" \
  --budget-mib "$budget_mib" --ingest-a "$ingest_a" --ingest-b "$ingest_b" --read-a "$read_a" --admin "$admin" \
  --metrics "$metrics" --others "${others[@]}"
