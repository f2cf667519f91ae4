#!/usr/bin/env bash
# make fuzz: builds the three libFuzzer targets (bundles, record lines, stored record blocks) (-sanitize=fuzzer,address into .build-fuzz), seeds their corpora from
# `pushtrace simulate` output, and runs each for FUZZ_SECONDS (default 60) or FUZZ_RUNS executions.
# Both use Fuzz/extreme-values.dict (Int64's ends, 2^53, 1e308, -0, huge exponents, control characters).
# A crash, a hang (over 10 s), an allocation over 512 MB or a resident size over 2 GB stops the run; libFuzzer
# writes the input as fuzz/artifacts/<target>/crash-… (or oom-…, timeout-…) — copy it to Tests/PushTraceCoreTests/FuzzCrashers/<bundle|records|block>/ so that
# the regression test replays it for ever.
set -euo pipefail
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:--1}
work=${FUZZ_DIR:-fuzz}
swift build -c release --build-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
  -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld \
  --product bundle-decoder-fuzzer >/dev/null
swift build -c release --build-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
  -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld \
  --product record-decoder-fuzzer >/dev/null
swift build -c release --build-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
  -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld \
  --product block-decoder-fuzzer >/dev/null
bin=.build-fuzz/release
# libFuzzer reports crashes itself; Swift's backtracer would get in its way (and trip AddressSanitizer).
export SWIFT_BACKTRACE=enable=no

# Seeds: simulated bundles as the server receives them (byte 0: encoding 1 = gzip, byte 1: piece size), and their
# record lines alone.
if [ ! -d "$work/seeds/bundle" ]; then
  mkdir -p "$work/seeds/bundle" "$work/seeds/records"
  .build/debug/pushtrace simulate --out "$work/simulated" --notifications 200 --seed 9 >/dev/null 2>&1 \
    || .build/release/pushtrace simulate --out "$work/simulated" --notifications 200 --seed 9 >/dev/null
  n=0
  while IFS= read -r file; do
    n=$((n + 1)); [ $n -gt 300 ] && break
    { printf '\001\377'; cat "$file"; } > "$work/seeds/bundle/$n"
    { printf '\000\017'; gzip -dc "$file" 2>/dev/null || cat "$file"; } > "$work/seeds/bundle/$n-plain"
    (gzip -dc "$file" 2>/dev/null || cat "$file") | tail -n +2 > "$work/seeds/records/$n"
  done < <(find "$work/simulated" -type f -name '*.ndjson*' | sort)
fi
# Record blocks as the store keeps them (FuzzHarness.block's layout: mode 1, a dictionary, declared counts, zlib
# data compressed against it), and record lines to compress and read back (mode 0).
if [ ! -d "$work/seeds/block" ]; then
  mkdir -p "$work/seeds/block"
  python3 - "$work/seeds" <<'PY'
import glob, os, struct, sys, zlib
seeds = sys.argv[1]
for n, path in enumerate(sorted(glob.glob(os.path.join(seeds, "records", "*")))[:200]):
    lines = open(path, "rb").read().rstrip(b"\n").split(b"\n")[:256]
    raw = b"\n".join(lines)
    dictionary = b"\n".join(lines[:8])[-2048:]
    c = zlib.compressobj(6, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, dictionary)
    data = c.compress(raw) + c.flush()
    block = (bytes([1]) + struct.pack(">H", len(dictionary)) + dictionary + struct.pack(">H", len(lines))
             + len(raw).to_bytes(3, "big") + data)
    open(os.path.join(seeds, "block", f"{n}"), "wb").write(block)
    open(os.path.join(seeds, "block", f"{n}-lines"), "wb").write(bytes([0]) + raw)
PY
fi

for target in bundle records block; do
  case $target in
    bundle) binary=$bin/bundle-decoder-fuzzer ;;
    records) binary=$bin/record-decoder-fuzzer ;;
    block) binary=$bin/block-decoder-fuzzer ;;
  esac
  mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
  echo "== fuzzing $target for ${seconds}s (runs: $runs)"
  "$binary" "$work/corpus/$target" "$work/seeds/$target" -max_total_time="$seconds" -runs="$runs" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=65536 -print_final_stats=1 \
    -dict=Fuzz/extreme-values.dict \
    -artifact_prefix="$work/artifacts/$target/" > "$work/$target.log" 2>&1 || true
  grep -E "^(Dictionary:|#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" "$work/$target.log" || true
  # A fuzzer that did not run (a dictionary it cannot parse, a bad flag) prints no statistics: that is a failure too.
  if ! grep -q "^stat::number_of_executed_units" "$work/$target.log"; then
    echo "fuzz: the $target fuzzer did not run:"; tail -n 5 "$work/$target.log"; exit 1
  fi
  if ls "$work/artifacts/$target"/* >/dev/null 2>&1; then
    echo "fuzz: $target found inputs that fail: $(ls "$work/artifacts/$target")"
    exit 1
  fi
done
echo "fuzz: no crash, hang or runaway allocation"
