#!/usr/bin/env bash
# Type-checks the agent's Apple-only code on Linux, which has no Apple SDK: the agent's sources, with everything under
# `#if canImport(Darwin)`, `UserNotifications`, `UserNotificationsUI`, `BackgroundTasks` and `os` switched on, against
# the declaration-only stand-in of that API in Tests/AppleSDKStandIn; then every Swift sample of docs/agent.md and README.md
# against the agent so built. Swift 6 language mode, strict concurrency. Also builds Agent/Package.swift (the
# tools-6.0 manifest an iOS app points Xcode at), and refuses any API newer than the agent's deployment targets
# (scripts/check-availability.py), and runs the service extension's base class (Tests/AppleSDKStandIn/Run). Run by
# make test.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
out=.build/apple-standin
rm -rf "$out" && mkdir -p "$out/samples"
flags=(-swift-version 6 -strict-concurrency=complete -warnings-as-errors -parse-as-library)

echo "== the agent's own manifest (Agent/Package.swift, tools $(head -1 Agent/Package.swift | sed 's/.*://'))"
$SWIFT build --package-path Agent --scratch-path .build/agent-package 2>&1 | tail -1

echo "== an app that depends on this repository with traits: [] resolves and builds no server package"
# As Xcode adds the repository by URL, by path here: the root manifest's package dependencies are all behind its
# default `Server` trait, so an app that leaves it off and uses only PushTraceAgent fetches and compiles none of them.
app=$out/app-package
mkdir -p "$app/Sources/App" "$app/Sources/Extension"
cat >"$app/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.iOS(.v15), .macOS(.v14)],
    dependencies: [.package(path: "$PWD", traits: [])],
    targets: [
        .target(name: "App", dependencies: [.product(name: "PushTraceAgentApp", package: "$(basename "$PWD")")]),
        .target(name: "Extension", dependencies: [.product(name: "PushTraceAgent", package: "$(basename "$PWD")")]),
    ]
)
MANIFEST
cat >"$app/Sources/App/App.swift" <<'SWIFT'
import Foundation
import PushTraceAgentApp

public func setUp() { PushTrace.configure(appGroup: "group.a", server: URL(string: "https://pushtrace.example.com")!, token: "pt_x") }
SWIFT
cat >"$app/Sources/Extension/Extension.swift" <<'SWIFT'
import Foundation
import PushTraceAgent

public let configuration = PushTrace.Configuration(appGroup: "group.a", server: URL(string: "https://pushtrace.example.com")!, token: "pt_x")
SWIFT
$SWIFT package --package-path "$app" resolve >"$out/app-resolve.log" 2>&1 || { cat "$out/app-resolve.log"; exit 1; }
if [ -e "$app/Package.resolved" ] || [ -n "$(ls -A "$app/.build/checkouts" 2>/dev/null)" ]; then
    echo "the app package fetched packages:"; ls "$app/.build/checkouts"; exit 1
fi
$SWIFT build --package-path "$app" -v >"$out/app-build.log" 2>&1 || { tail -40 "$out/app-build.log"; exit 1; }
# Every module compiled, manifests aside (each manifest is compiled as a module named after its folder).
compiled=$(grep -v 'ManifestAPI' "$out/app-build.log" | grep -o -- '-module-name [A-Za-z0-9_]*' | awk '{print $2}' | sort -u | tr '\n' ' ')
for module in $compiled; do
    case $module in
    App | Extension | PushTraceAgentApp | PushTraceAgent | PushTraceRecords | PushTraceGzip) ;;
    *) echo "the app package compiled $module (modules: $compiled)"; exit 1 ;;
    esac
done
echo "fetched no package; compiled only: $compiled"

echo "== the Apple SDK stand-in"
$SWIFT build --target PushTraceAgentApp >/dev/null
modules=$($SWIFT build --show-bin-path)/Modules
emit() {  # emit MODULE FILE…
    local name=$1; shift
    swiftc "${flags[@]}" -package-name pushtrace -module-name "$name" -emit-module -emit-module-path "$out/$name.swiftmodule" -I "$out" "$@"
}
# The SDK's modules are Objective-C and C headers, declared without Swift 6's checks (a C global is a plain `var`);
# their stand-ins are compiled the same way. Code that uses them is checked in Swift 6 mode.
for module in Darwin os UserNotifications UIKit UserNotificationsUI BackgroundTasks SwiftUI; do
    swiftc -swift-version 5 -parse-as-library -module-name "$module" -emit-module \
        -emit-module-path "$out/$module.swiftmodule" -I "$out" "Tests/AppleSDKStandIn/$module.swift"
done

echo "== the check itself: a switch expression passed as an argument is refused"
if swiftc "${flags[@]}" -typecheck -I "$out" Tests/AppleSDKStandIn/SelfTest/SwitchExpressionArgument.swift 2>"$out/selftest.log"; then
    echo "Tests/AppleSDKStandIn/SelfTest/SwitchExpressionArgument.swift compiled: the check would not catch it"; exit 1
fi
grep -q "'switch' may only be used as expression" "$out/selftest.log" || { cat "$out/selftest.log"; exit 1; }

zlib=(-Xcc -fmodule-map-file=Sources/CZlib/module.modulemap)
echo "== PushTraceAgent with its Apple-only code"
emit PushTraceAgent -I "$modules" -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap Sources/PushTraceAgent/*.swift
echo "== PushTraceAgentApp (the app's product) with its Apple-only code"
emit PushTraceAgentApp -I "$modules" -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap Sources/PushTraceAgentApp/*.swift
# The check must see the Apple-only lines: each guard it relies on is true under the stand-in.
for guard in Darwin UserNotifications UserNotificationsUI BackgroundTasks os UIKit; do
    grep -q "canImport($guard)" Sources/PushTraceAgent/*.swift Sources/PushTraceAgentApp/*.swift || { echo "no code under canImport($guard): update this script"; exit 1; }
done
# The two extensions link PushTraceAgent: nothing in it may be unavailable to an app extension.
if grep -n "iOSApplicationExtension, unavailable\|UIApplication\|BGTaskScheduler" Sources/PushTraceAgent/*.swift; then
    echo "PushTraceAgent is the extensions' product: what only an app may use belongs in PushTraceAgentApp"; exit 1
fi

echo "== no API newer than the agent's deployment targets (scripts/check-availability.py)"
# The self-test first: an unguarded firstRange(of:) (iOS 16) must be refused, its guarded uses let through.
if python3 scripts/check-availability.py Agent/Package.swift -- -parse-as-library \
    Tests/AppleSDKStandIn/SelfTest/NewerAPI.swift >"$out/availability-selftest.log" 2>&1; then
    cat "$out/availability-selftest.log"; echo "Tests/AppleSDKStandIn/SelfTest/NewerAPI.swift passed: the check would not catch it"; exit 1
fi
[ "$(grep -c 'needs iOS 16.0' "$out/availability-selftest.log")" = 1 ] || { cat "$out/availability-selftest.log"; exit 1; }
python3 scripts/check-availability.py Agent/Package.swift \
    -- -swift-version 6 -parse-as-library -module-name PushTraceRecords Sources/PushTraceRecords/*.swift \
    -- -swift-version 6 -parse-as-library -module-name PushTraceGzip -I "$modules" "${zlib[@]}" Sources/PushTraceGzip/*.swift \
    -- -swift-version 6 -parse-as-library -package-name pushtrace -module-name PushTraceAgent -I "$out" -I "$modules" "${zlib[@]}" Sources/PushTraceAgent/*.swift \
    -- -swift-version 6 -parse-as-library -package-name pushtrace -module-name PushTraceAgentApp -I "$out" -I "$modules" "${zlib[@]}" Sources/PushTraceAgentApp/*.swift

echo "== the service-extension base class, run (Tests/AppleSDKStandIn/Run)"
# PushTraceAgent built for Linux with only the UserNotifications stand-in in view: the base class compiles, and the run
# subclasses the stand-in's content types with real values. Darwin, os and UIKit stay absent, as on Linux, so no
# other placeholder body can run. A rich push whose image a real HTTP server serves, then one whose image is missing.
. scripts/lib.sh
run=$out/run
mkdir -p "$run/www" "$run/container"
library() {  # library MODULE SWIFT-VERSION FILE…: a static library and its module in $run
    local name=$1 version=$2; shift 2
    swiftc -swift-version "$version" -parse-as-library -package-name pushtrace -module-name "$name" -I "$run" "${zlib[@]}" \
        -emit-module -emit-module-path "$run/$name.swiftmodule" -emit-library -static -o "$run/lib$name.a" "$@"
}
library UserNotifications 5 Tests/AppleSDKStandIn/UserNotifications.swift
library PushTraceRecords 6 Sources/PushTraceRecords/*.swift
library PushTraceGzip 6 Sources/PushTraceGzip/*.swift
library PushTraceAgent 6 Sources/PushTraceAgent/*.swift
swiftc -swift-version 6 -I "$run" "${zlib[@]}" -L "$run" -lPushTraceAgent -lPushTraceGzip -lPushTraceRecords -lUserNotifications -lz \
    -o "$run/service-extension-run" Tests/AppleSDKStandIn/Run/main.swift
head -c 4096 /dev/urandom >"$run/www/pick.png"
port=$(free_port)
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$run/www" >"$run/http.log" 2>&1 &
http=$!
trap 'kill $http 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/pick.png" && break; sleep 0.1; done
"$run/service-extension-run" "$run/container" "http://127.0.0.1:$port/"

echo "== the Swift samples of docs/agent.md and README.md"
# Each block is its own file. The block that says it is "a member of all three targets" is compiled with every other
# one (they use it); a block that starts with swift-tools-version is a manifest, checked against PackageDescription.
python3 - "$out/samples" <<'PY'
import re, sys, pathlib
blocks = [block for guide in ("docs/agent.md", "README.md")
          for block in re.findall(r"^```swift\n(.*?)^```", pathlib.Path(guide).read_text(), re.S | re.M)]
for index, block in enumerate(blocks, 1):
    kind = "manifest" if block.startswith("// swift-tools-version") else "shared" if "a member of all three targets" in block else "sample"
    pathlib.Path(sys.argv[1], f"{index:02d}-{kind}.swift").write_text(block)
print(f"{len(blocks)} samples")
PY
manifest_api=$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")/lib/swift/pm/ManifestAPI
shared=("$out"/samples/*-shared.swift)
[ -e "${shared[0]}" ] || { echo "docs/agent.md has no block that is 'a member of all three targets'"; exit 1; }
# Under both default actor isolations: a package's (nonisolated) and that of Xcode 26's new targets (MainActor).
for isolation in nonisolated MainActor; do
    for sample in "$out"/samples/*.swift; do
        number=$(basename "$sample" | cut -c1-2)
        case $sample in
        *-manifest.swift)
            [ "$isolation" = MainActor ] && continue
            swiftc -swift-version 6 -package-description-version "$(head -1 "$sample" | sed "s/.*://")" -typecheck -I "$manifest_api" "$sample"
            ;;
        *-shared.swift) swiftc "${flags[@]}" -default-isolation "$isolation" -typecheck -I "$out" -I "$modules" "${zlib[@]}" "$sample" ;;
        *) swiftc "${flags[@]}" -default-isolation "$isolation" -typecheck -I "$out" -I "$modules" "${zlib[@]}" "$sample" "${shared[@]}" ;;
        esac || { echo "docs/agent.md, then README.md: Swift block number $number does not compile with default isolation $isolation (above)"; exit 1; }
    done
done
echo "the Apple-only code and $(ls "$out"/samples | wc -l) Swift samples of docs/agent.md and README.md type-check (default isolation nonisolated and MainActor)"
