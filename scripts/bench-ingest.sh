#!/usr/bin/env bash
# Ingest benchmark (docs/PERFORMANCE.md): `pushtrace ingest` of a ~1,000,000-record simulated corpus, beside
# sqlite3's `.import` of the same rows into the same tables, measured in the same run.
# Usage: scripts/bench-ingest.sh [notifications]   (86000 notifications ≈ 1,000,000 records; needs `make release`)
set -euo pipefail
bin=$(pwd)/.build/release/pushtrace
n=${1:-86000}
work=${BENCH_DIR:-bench-data}
mkdir -p "$work"
cd "$work"

if [ ! -f "bundles-$n/scenarios.json" ]; then
  echo "simulating $n notifications (once; kept in $work/bundles-$n)"
  rm -rf "bundles-$n"
  "$bin" simulate --out "bundles-$n" --notifications "$n" --seed 1
fi
files=$(find "bundles-$n" -name '*.ndjson*' | wc -l)
bytes=$(find "bundles-$n" -name '*.ndjson*' -printf '%s\n' | awk '{s+=$1} END {print s}')
now() { date +%s.%N; }

rm -f ingest.sqlite ingest.sqlite-wal ingest.sqlite-shm
sync
t0=$(now)
"$bin" ingest --db ingest.sqlite --quiet --format json "bundles-$n" > ingest.json
t1=$(now)
records=$(sqlite3 ingest.sqlite "SELECT count(*) FROM record")
notifications=$(sqlite3 ingest.sqlite "SELECT count(*) FROM notification")

# The floor: the same rows, exported from what pushtrace stored, imported by sqlite3 into the same schema.
for table in bundle record config device notification; do
  sqlite3 -csv ingest.sqlite "SELECT * FROM $table" > "$table.csv"
done
sqlite3 ingest.sqlite .schema | grep -v sqlite_sequence > schema.sql
rm -f floor.sqlite floor.sqlite-wal floor.sqlite-shm
sqlite3 floor.sqlite "PRAGMA journal_mode=WAL" > /dev/null
sqlite3 floor.sqlite < schema.sql
cat > import.sql <<'SQL'
PRAGMA synchronous=NORMAL;
.mode csv
.import bundle.csv bundle
.import record.csv record
.import config.csv config
.import device.csv device
.import notification.csv notification
SQL
sync
t2=$(now)
sqlite3 floor.sqlite < import.sql
t3=$(now)

python3 - "$t0" "$t1" "$t2" "$t3" "$records" "$notifications" "$files" "$bytes" <<'PY'
import json, sys
t0, t1, t2, t3 = map(float, sys.argv[1:5])
records, notifications, files, size = map(int, sys.argv[5:9])
report = json.load(open("ingest.json"))
ingest, floor = t1 - t0, t3 - t2
print(f"corpus: {files} bundle files, {size / 1e6:.0f} MB on disk, {records} records, {notifications} notifications")
store, diagnose = report["store_ms"] / 1000, report["diagnose_ms"] / 1000
print(f"pushtrace ingest (store + diagnose): {ingest:7.2f} s  {records / ingest:9,.0f} records/s")
print(f"  of which storing (every record committed): {store:7.2f} s  {records / store:9,.0f} records/s")
print(f"  of which diagnosing {notifications} notifications: {diagnose:7.2f} s")
print(f"sqlite3 .import of the same rows:    {floor:7.2f} s  {records / floor:9,.0f} records/s")
print(f"ratio to the floor: {floor / ingest:.2f} with diagnosis, {floor / store:.2f} storing alone  (target ≥ 0.50)")
PY
