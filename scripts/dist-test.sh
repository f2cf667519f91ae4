#!/usr/bin/env bash
# make dist-test: the .deb of make dist on a minimal Debian 12 with no Swift, as an operator would use it.
#
# The Debian is debootstrapped once (--variant=minbase) into DIST_TEST_CACHE (default
# /var/cache/pushtrace-dist-test) and reused; each run works on an overlay of it, in a private mount namespace, so
# that nothing it installs outlives the run. In that chroot, with apt from DIST_TEST_MIRROR or the host's sources:
#   - apt-get install ./pushtrace_VERSION-1_amd64.deb (with man-db, to read the pages), no Swift anywhere;
#   - pushtrace --version; man pushtrace-why; the user, folders, modes and the unit's enablement;
#   - the unit run as systemd would (run_unit, scripts/lib.sh): skipped until the env file names the store, then
#     serving; an ingest and a read token; a simulated app's bundles uploaded; `why` answering the cause the
#     simulator meant;
#   - an upgrade to a second build (revision 2, its env template changed): the store and the edited env file kept,
#     the new template beside it, why still answered;
#   - remove: the server stopped, the binary gone, the config and the data kept; purge: the config gone, the data
#     kept.
# The chroot runs no systemd: the maintainer scripts find /run/systemd/system and a systemctl and deb-systemd-invoke
# that write down what they are asked (reload; no start on installation, try-restart on upgrade, stop on removal),
# and the test runs the unit itself as systemd would.
# Run from the repository root after make dist, as root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
cache=${DIST_TEST_CACHE:-/var/cache/pushtrace-dist-test}
fail() { echo "dist-test: $*"; exit 1; }

if [ "${1:-}" != "--inside" ]; then
  [ "$(id -u)" = 0 ] || fail "run it as root (debootstrap, chroot and mounts)"
  version=$(sed -n 's/.*static let release = "\(.*\)"/\1/p' Sources/PushTraceRecords/PushTraceVersion.swift)
  deb=dist/pushtrace_${version}-1_amd64.deb
  [ -f "$deb" ] || fail "no $deb: make dist first"
  if [ ! -x "$cache/bookworm/usr/bin/apt-get" ]; then
    echo "== debootstrap --variant=minbase bookworm into $cache/bookworm (once; later runs reuse it)"
    mkdir -p "$cache"
    rm -rf "$cache/bookworm.partial"
    debootstrap --variant=minbase bookworm "$cache/bookworm.partial" "${DIST_TEST_MIRROR:-http://deb.debian.org/debian}" \
      > "$cache/debootstrap.log" 2>&1 || { tail -n 20 "$cache/debootstrap.log"; fail "debootstrap failed"; }
    mv "$cache/bookworm.partial" "$cache/bookworm"
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp "$deb" "$work/"
  echo "== a second build of the package, revision 2, for the upgrade, its env template changed as a later release's may"
  DIST_REVISION=2 DIST_DIR="$work" DIST_LINTIAN=no scripts/dist.sh | tail -n 3
  second=$work/pushtrace_${version}-2_amd64.deb
  dpkg-deb -R "$second" "$work/second"
  echo "# A setting a later release documents." >> "$work/second/etc/pushtrace/pushtrace.env"
  dpkg-deb --root-owner-group -Zgzip -b "$work/second" "$second" > /dev/null
  rm -rf "$work/second"
  unshare --mount --propagation private "$0" --inside "$work" "$version"
  exit
fi

work=$2
version=$3
root=$work/root
mkdir -p "$work/upper" "$work/overlay-work" "$root"
mount -t overlay overlay -o "lowerdir=$cache/bookworm,upperdir=$work/upper,workdir=$work/overlay-work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's Debian sources (with its security updates) when it has them, else debootstrap's mirror.
if [ -z "${DIST_TEST_MIRROR:-}" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
  rm -f "$root/etc/apt/sources.list"
fi
mv "$work"/pushtrace_*.deb "$root/tmp/"
# systemd as the maintainer scripts see it on a host that runs it: /run/systemd/system, and systemctl and
# deb-systemd-invoke that write down what they are asked (this chroot has no systemd to carry it out).
mkdir -p "$root/run/systemd/system"
# This deb-systemd-invoke replaces the real one, in this overlay only. systemctl goes in /usr/sbin, on every PATH
# dpkg gives the scripts but not where deb-systemd-helper looks for a real one (it would hand enabling to it).
for stub in /usr/sbin/systemctl /usr/bin/deb-systemd-invoke; do
  printf '#!/bin/sh\necho "%s $*" >> /var/log/systemd-calls\n' "$(basename "$stub")" > "$root$stub"
  chmod 755 "$root$stub"
done
calls() { cat "$root/var/log/systemd-calls" 2>/dev/null; : > "$root/var/log/systemd-calls"; }
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
apt() { in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -qq -o Dpkg::Use-Pty=0 "$@"; }
ok() { echo "  ok: $*"; }
unit=$root/lib/systemd/system/pushtrace.service
env_file=$root/etc/pushtrace/pushtrace.env
port=$(free_port)
server=http://127.0.0.1:$port
start_server() {
  run_unit "$unit" "$root" 2>> "$work/server.log" &
  server_pid=$!
  wait_healthy "$server" 100 0.1 || { cat "$work/server.log"; fail "the service did not start"; }
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "the service exited with $? on SIGTERM"
  server_pid=""
}
# `why` through the server, with the packaged CLI (its HTTP client is the binary's own Foundation and the
# system's libcurl), until it names the expected cause: the server settles a notification shortly after its upload.
answer_why() {
  local cause=""
  for _ in $(seq 1 50); do
    cause=$(in_root env PUSHTRACE_TOKEN="$read_token" pushtrace why "$id" --server "$server" --format json \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["cause"])' 2>/dev/null || true)
    [ "$cause" = "$expected" ] && return 0
    sleep 0.2
  done
  fail "why $id answered '${cause:-nothing}', not $expected"
}

echo "== apt-get install ./pushtrace_${version}-1_amd64.deb on Debian $(cat "$root/etc/debian_version"), minimal"
apt update
apt install --no-install-recommends "/tmp/pushtrace_${version}-1_amd64.deb" man-db 2>&1 \
  | grep -E '^pushtrace:|^Setting up pushtrace' || true
[ "$(in_root dpkg-query -W -f '${Status} ${Version}' pushtrace)" = "install ok installed $version-1" ] \
  || fail "pushtrace $version-1 is not installed"
ok "installed $(in_root dpkg-query -W -f '${Package} ${Version}, depends on ${Depends}' pushtrace)"

echo "== no Swift on this host: the binary needs only Debian's libraries"
! in_root sh -c 'command -v swift' >/dev/null || fail "swift is on the host's PATH"
[ -z "$(find "$root" -xdev -name 'libswiftCore*' -print -quit)" ] || fail "the Swift runtime is installed"
missing=$(in_root ldd /usr/bin/pushtrace | grep -c 'not found' || true)
[ "$missing" = 0 ] || { in_root ldd /usr/bin/pushtrace; fail "libraries not found"; }
ok "no swift, no libswiftCore; ldd: $(in_root ldd /usr/bin/pushtrace | wc -l) libraries, none missing"
ok "pushtrace --version: $(in_root pushtrace --version | head -n 1)"

echo "== the files, the user and the unit"
pages=$(ls "$root/usr/share/man/man1" | grep -c '^pushtrace')
in_root man -P cat pushtrace-why 2> "$work/man.err" | grep -q 'pushtrace-why' || { cat "$work/man.err"; fail "man pushtrace-why did not render"; }
ok "man pushtrace-why renders: $(in_root man -P cat pushtrace-why 2>/dev/null | sed -n 4p | sed 's/^ *//'); $pages pages"
in_root getent passwd pushtrace | grep -q ':/var/lib/pushtrace:/usr/sbin/nologin$' || fail "no pushtrace system user"
# Owners by number: the host's names for the chroot's users differ.
uid=$(in_root id -u pushtrace)
[ "$(stat -c '%u %a' "$root/var/lib/pushtrace")" = "$uid 700" ] || fail "/var/lib/pushtrace is $(stat -c '%u %a' "$root/var/lib/pushtrace")"
[ "$(stat -c '%u %a' "$env_file")" = "0 600" ] || fail "the env file is $(stat -c '%u %a' "$env_file")"
in_root dpkg-query -W -f '${Conffiles}' pushtrace | grep -q '/etc/pushtrace/pushtrace.env' || fail "the env file is no conffile"
[ -L "$root/etc/systemd/system/multi-user.target.wants/pushtrace.service" ] || fail "the unit is not enabled"
ok "user pushtrace; /var/lib/pushtrace pushtrace 700; /etc/pushtrace/pushtrace.env root 600, a conffile; the unit enabled"
for example in nginx.conf pushtrace-rules.yml pushtrace-dashboard.json; do
  [ -f "$root/usr/share/doc/pushtrace/examples/$example" ] || fail "no example $example"
done
ok "examples: $(ls "$root/usr/share/doc/pushtrace/examples" | tr '\n' ' ')"
asked=$(calls)
grep -q '^systemctl --system daemon-reload$' <<< "$asked" || fail "postinst did not reload systemd: $asked"
! grep -q '^deb-systemd-invoke .*pushtrace' <<< "$asked" || fail "a first installation started or restarted the unit: $asked"
ok "systemd asked to reload, and nothing of pushtrace.service: the unit is not started before it is configured"

echo "== the unit, as systemd would run it"
status=0
(run_unit "$unit" "$root") 2> "$work/skipped.log" || status=$?
[ "$status" = 3 ] || fail "the unit started (exit $status) before the env file named the store"
ok "before PUSHTRACE_DB is set, the start is skipped: $(cat "$work/skipped.log")"
sed -i "s|^#PUSHTRACE_DB=/var/lib/pushtrace/pushtrace.sqlite|PUSHTRACE_DB=/var/lib/pushtrace/pushtrace.sqlite|; s|^PUSHTRACE_PORT=.*|PUSHTRACE_PORT=$port|" "$env_file"
echo "# edited by make dist-test" >> "$env_file"
start_server
[ "$(stat -c %u "/proc/$server_pid")" = "$uid" ] || fail "the server does not run as pushtrace"
ok "ExecStart=$(unit_value "$unit" ExecStart) serving on $server as the pushtrace user"

echo "== tokens, an app's bundles, and why"
app=net.rorklab.dailypick
ingest_token=$(in_root runuser -u pushtrace -- pushtrace token create --db /var/lib/pushtrace/pushtrace.sqlite --scope ingest --app "$app" --label dist-test)
read_token=$(in_root runuser -u pushtrace -- pushtrace token create --db /var/lib/pushtrace/pushtrace.sqlite --scope read --app "$app" --label dist-test)
in_root pushtrace simulate --out /tmp/bundles --notifications 60 --seed 5 > /dev/null
uploaded=0
for file in "$root/tmp/bundles/$app"/*; do
  case "$file" in
    *.ndjson.gz) curl -sf -o /dev/null -H "Authorization: Bearer $ingest_token" -H "Content-Encoding: gzip" \
      --data-binary @"$file" "$server/v1/bundles" || fail "upload of $(basename "$file") failed" ;;
    *.ndjson) curl -sf -o /dev/null -H "Authorization: Bearer $ingest_token" -H "Content-Type: application/x-ndjson" \
      --data-binary @"$file" "$server/v1/events" || fail "upload of $(basename "$file") failed" ;;
  esac
  uploaded=$((uploaded + 1))
done
read -r id expected < <(python3 - "$root/tmp/bundles/scenarios.json" "$app" <<'PY'
import json, sys
examples = json.load(open(sys.argv[1]))["examples"]
mine = [e for cause in ("attachment_failed", "service_timeout", "category_not_handled") for e in examples.get(cause, [])
        if e["app_id"] == sys.argv[2]]
print(mine[0]["notification_id"], mine[0]["cause"])
PY
)
answer_why
ok "$uploaded files of $app uploaded; why $id answers $expected"
in_root env PUSHTRACE_TOKEN="$read_token" pushtrace why "$id" --server "$server" | head -n 4 | sed 's/^/    /'

echo "== upgrade to ${version}-2: the store and the edited config kept"
stop_server
# The operator's unattended way: keep the edited file, the new template beside it.
apt -o Dpkg::Options::=--force-confold install "/tmp/pushtrace_${version}-2_amd64.deb" 2>&1 \
  | grep -E '^Setting up pushtrace|conffile' || true
[ "$(in_root dpkg-query -W -f '${Version}' pushtrace)" = "$version-2" ] || fail "the upgrade did not install $version-2"
grep -q '^# edited by make dist-test$' "$env_file" && grep -q '^PUSHTRACE_DB=/var/lib' "$env_file" \
  || fail "the upgrade replaced the edited env file"
grep -q '^# A setting a later release documents.$' "$env_file.dpkg-dist" || fail "no new template beside the edited env file"
[ "$(stat -c '%u %a' "$env_file")" = "0 600" ] || fail "the upgrade changed the env file's mode"
grep -q '^deb-systemd-invoke try-restart pushtrace.service$' <<< "$(calls)" || fail "the upgrade did not ask to restart a running server"
start_server
answer_why
ok "$version-2 installed, systemd asked to restart a running server (try-restart); the edited env file kept (root 600), the new template beside it as .dpkg-dist; why $id still answers $expected"

echo "== remove, then purge"
stop_server
apt remove pushtrace > /dev/null
grep -q '^deb-systemd-invoke stop pushtrace.service$' <<< "$(calls)" || fail "remove did not stop the server"
[ "$(readlink "$root/etc/systemd/system/pushtrace.service")" = /dev/null ] || fail "remove did not mask the unit"
[ ! -e "$root/usr/bin/pushtrace" ] || fail "remove left the binary"
[ -f "$env_file" ] || fail "remove deleted the config"
[ -f "$root/var/lib/pushtrace/pushtrace.sqlite" ] || fail "remove deleted the store"
ok "removed ($(in_root dpkg-query -W -f '${db:Status-Abbrev}' pushtrace)): systemd asked to stop the server, the unit masked, the binary gone, the config and the store kept"
apt purge pushtrace 2>&1 | grep '^pushtrace:' || true
[ ! -e "$root/etc/pushtrace" ] || fail "purge left /etc/pushtrace: $(ls -A "$root/etc/pushtrace")"
[ ! -L "$root/etc/systemd/system/pushtrace.service" ] && [ ! -L "$root/etc/systemd/system/multi-user.target.wants/pushtrace.service" ] \
  || fail "purge left the unit's mask or enablement"
[ -f "$root/var/lib/pushtrace/pushtrace.sqlite" ] || fail "purge deleted the store"
[ -z "$(in_root dpkg-query -W -f '${Status}' pushtrace 2>/dev/null)" ] || fail "dpkg still knows pushtrace after purge"
ok "purged: /etc/pushtrace, the mask and the enablement gone, /var/lib/pushtrace/pushtrace.sqlite kept ($(stat -c %s "$root/var/lib/pushtrace/pushtrace.sqlite") bytes)"
echo "dist-test: passed"
