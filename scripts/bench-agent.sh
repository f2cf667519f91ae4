#!/usr/bin/env bash
# make bench-agent: the cost of one agent record call (median, p99), the memory the agent adds to a process that
# records 10,000 events, against their targets (median < 20 µs, < 2 MB), and what linking the agent adds to a binary.
# Release builds; the container is a temporary directory on the local disk, as an App Group container is on the
# device's.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
bin=${BIN:-.build/release/pushtrace-agent-probe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/container"
echo "== pushtrace-agent-probe bench: 10,000 records (5,000 single events, 1,000 service runs of 5)   (targets: median < 20 µs, < 2 MB added)"
"$bin" bench "$work/container" 10000

# The size linking adds: a small program that records and uploads through the agent, against the same program
# without it, both -O, statically linking the agent's modules (as an app does) and stripped. Linux binaries link
# Foundation dynamically, as iOS apps link the system's; the figure is the agent's own code.
echo "== binary size: what linking PushTraceAgent adds (release, stripped)"
release=$($SWIFT build -c release --show-bin-path)
cat > "$work/without.swift" <<'SWIFT'
import Foundation
let folder = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory())
print(folder.path, Date())
SWIFT
cat > "$work/with.swift" <<'SWIFT'
import Foundation
import PushTraceAgent
let folder = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory())
print(folder.path, Date())
let recorder = try Recorder.shared(.service, container: AgentContainer(directory: folder))
let trace = recorder.service.begin("n-1", category: "DAILY_PICK")
trace.delivered()
let uploader = try Uploader(configuration: UploaderConfiguration(server: URL(string: "http://127.0.0.1:9")!, token: "t", appID: "a"),
                            container: recorder.container, recorder: recorder)
Task { print(await uploader.upload()) }
SWIFT
objects=$(ls "$release"/PushTraceAgent.build/*.o "$release"/PushTraceRecords.build/*.o "$release"/PushTraceGzip.build/*.o)
swiftc -O -parse-as-library -o "$work/without" "$work/without.swift" 2>/dev/null || swiftc -O -o "$work/without" "$work/without.swift"
swiftc -O -I "$release/Modules" -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap -o "$work/with" "$work/with.swift" $objects -lz
strip "$work/without" "$work/with"
without=$(stat -c %s "$work/without"); with=$(stat -c %s "$work/with")
echo "without the agent: $without bytes; with it: $with bytes; the agent adds $(( (with - without) / 1024 )) KiB"
