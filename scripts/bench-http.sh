#!/usr/bin/env bash
# HTTP ingest benchmark (issue 3, docs/PERFORMANCE.md): the same simulated corpus stored by `pushtrace ingest` and
# uploaded to `pushtrace serve` by 1, 8 and 64 concurrent uploaders, measured in one run; the server's peak RSS;
# and a gzip bomb (1 GiB of zeros) refused with 413 while the server's RSS stays small.
# Usage: scripts/bench-http.sh [notifications]   (needs `make release`; default 20000 notifications)
set -euo pipefail
root=$(pwd)
bin=$root/.build/release
n=${1:-20000}
work=${BENCH_DIR:-bench-data}
mkdir -p "$work"
cd "$work"
server_pid=""
trap '[ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true' EXIT
now() { date +%s.%N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
peak_rss_mb() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }

if [ ! -f "http-bundles-$n/scenarios.json" ]; then
  echo "simulating $n notifications (once; kept in $work/http-bundles-$n)"
  rm -rf "http-bundles-$n"
  "$bin/pushtrace" simulate --out "http-bundles-$n" --notifications "$n" --seed 5 >/dev/null
fi
corpus="http-bundles-$n"
files=$(find "$corpus" -name '*.ndjson*' | wc -l)

rm -f cli.sqlite*
t0=$(now)
"$bin/pushtrace" ingest --db cli.sqlite --quiet --format json "$corpus" > cli.json
t1=$(now)
records=$(sqlite3 cli.sqlite "SELECT count(*) FROM record")
store_ms=$(python3 -c "import json; print(json.load(open('cli.json'))['store_ms'])")
cli_rate=$(python3 -c "print(round($records / ($store_ms / 1000)))")
cli_total=$(python3 -c "print(round($records / ($t1 - $t0)))")
echo "corpus: $files bundles, $records records"
echo "CLI ingest: $cli_rate records/s storing (${store_ms} ms), $cli_total records/s with diagnosis"

start_server() { # db
  port=$(free_port)
  token=$("$bin/pushtrace" token create --db "$1" --scope admin 2>/dev/null)
  "$bin/pushtrace" serve --db "$1" --port "$port" --log-level error 2>>server.log &
  server_pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return 0; sleep 0.05; done
  echo "the server did not start"; exit 1
}

printf '%-12s %12s %12s %10s %10s %10s %12s\n' uploaders "records/s" "bundles/s" "p50 ms" "p99 ms" "RSS MB" "vs CLI"
ratio64=0; rss_max=0
for c in 1 8 64; do
  rm -f "http-$c.sqlite"*
  start_server "http-$c.sqlite"
  PUSHTRACE_TOKEN=$token "$bin/pushtrace-load" --server "http://127.0.0.1:$port" --concurrency "$c" --replay \
    --format json "$corpus" > "http-$c.json"
  rss=$(peak_rss_mb "$server_pid")
  kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=""
  read -r rate bps p50 p99 ok <<<"$(python3 -c "
import json; r = json.load(open('http-$c.json'))
print(round(r['records_per_second']), round(r['bundles_per_second']), round(r['p50_ms'], 1), round(r['p99_ms'], 1), r['statuses'].get('200', 0))")"
  stored=$(sqlite3 "http-$c.sqlite" "SELECT count(*) FROM record")
  [ "$stored" = "$records" ] || { echo "uploaders $c: stored $stored records, expected $records"; exit 1; }
  vs=$(python3 -c "print(round($rate / $cli_rate, 2))")
  printf '%-12s %12s %12s %10s %10s %10s %12s\n' "$c" "$rate" "$bps" "$p50" "$p99" "$rss" "$vs"
  [ "$c" = 64 ] && ratio64=$vs
  rss_max=$(python3 -c "print(max($rss_max, $rss))")
done
echo "HTTP at 64 uploaders / CLI storing: $ratio64 (target >= 0.70); server peak RSS $rss_max MB (target < 150 MB)"

# The gzip bomb: 1 GiB of zeros, compressed.
[ -f bomb.gz ] || head -c 1073741824 /dev/zero | gzip -9 > bomb.gz
rm -f bomb.sqlite*
start_server bomb.sqlite
status=$(curl -s -o bomb-answer.json -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Encoding: gzip' \
  --data-binary @bomb.gz "http://127.0.0.1:$port/v1/bundles")
rss=$(peak_rss_mb "$server_pid")
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=""
echo "gzip bomb ($(du -k bomb.gz | cut -f1) KiB, 1 GiB decompressed): HTTP $status, server peak RSS $rss MB (target < 200 MB)"
cat bomb-answer.json
