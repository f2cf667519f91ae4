#!/usr/bin/env bash
# make bench-agent: the cost of one agent record call (median, p99) and the memory the agent adds to a process that
# records 10,000 events, against their targets (median < 20 µs, < 2 MB). Release build; the container is a
# temporary directory on the local disk, as an App Group container is on the device's.
set -euo pipefail
bin=${BIN:-.build/release/pushtrace-agent-probe}
container=$(mktemp -d)
trap 'rm -rf "$container"' EXIT
echo "== pushtrace-agent-probe bench: 10,000 records (5,000 single events, 1,000 service runs of 5)   (targets: median < 20 µs, < 2 MB added)"
"$bin" bench "$container" 10000
