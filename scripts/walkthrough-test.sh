#!/usr/bin/env bash
# Part of make deploy-test: docs/deploy.md's "From a fresh Debian host to a TLS endpoint", run as written.
#
# Every ```sh block of that section runs, in order, in one shell, as root, in a private mount and network namespace:
# /etc, /usr/local/bin, /var/lib/pushtrace, /var/backups, /var/log/nginx and /run are the namespace's own (copies,
# or empty), so the user it adds, the files it installs and the ports it listens on vanish with it. push.example.com
# resolves to 127.0.0.1 there, and the certificate the walk-through makes is added to the trusted ones once made.
# It runs in a folder holding what step 1 says to copy to the host: .build/release/pushtrace and deploy/.
#
# The ```sh systemd blocks are the only ones it cannot run (no systemd in a container); each of their lines is
# carried out as systemd would for this unit: `start` runs the unit's ExecCondition and ExecStart as its User, in
# its WorkingDirectory, with its EnvironmentFile and UMask (run_unit, scripts/lib.sh); `stop` sends SIGTERM and
# waits; nginx is started or reloaded by its own command; `daemon-reload` and the journal's commands have nothing
# to act on. A line it does not know fails the test, so that the document cannot drift from what is run.
#
# Beyond each command's exit status it checks that the restore restored (a bundle uploaded after the backup is gone
# afterwards), and that after the rollback the server answers the first upload's why through TLS.
# Run from the repository root after `make release`, as root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ "${1:-}" != "--inside" ]; then
  [ "$(id -u)" = 0 ] || { echo "walkthrough-test: run it as root (it adds a user and installs files, in a namespace)"; exit 1; }
  [ -x .build/release/pushtrace ] || { echo "walkthrough-test: make release first"; exit 1; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 - docs/deploy.md "$work/walkthrough.sh" <<'PY'
import re, shlex, sys
text = open(sys.argv[1]).read()
section = text.split("## From a fresh Debian host to a TLS endpoint", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"^```(sh(?: systemd)?)\n(.*?)^```$", section, re.S | re.M)
if len(blocks) < 10:
    sys.exit(f"walkthrough-test: found {len(blocks)} blocks in docs/deploy.md's walk-through")
out = ["set -euo pipefail"]
for number, (kind, body) in enumerate(blocks, 1):
    out.append(f"echo; echo '== block {number} ({kind})'")
    for line in body.strip().splitlines():
        out.append(f"printf '$ %s\\n' {shlex.quote(line)}")
        out.append(f"systemd_line {shlex.quote(line)}" if kind == "sh systemd" else line)
    # The test's checks between blocks: after the backup is checked, one that the restore must undo.
    out.append("after_block" + (" backup-checked" if 'pushtrace check --db "$backup"' in body else ""))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print(f"walkthrough-test: {len(blocks)} blocks, {sum(k == 'sh' for k, _ in blocks)} run as written, "
      f"{sum(k != 'sh' for k, _ in blocks)} for systemd")
PY
  # What step 1 copies to the host.
  mkdir -p "$work/host/.build/release" "$work/root"
  cp .build/release/pushtrace "$work/host/.build/release/"
  cp -r deploy "$work/host/"
  # The namespace's own /etc and /usr/local/bin start as copies of the host's.
  cp -a /etc "$work/root/etc"
  cp -a /usr/local/bin "$work/root/bin"
  echo "127.0.0.1 push.example.com" >> "$work/root/etc/hosts"
  # The namespace's mount points that the host lacks are made on the host; they go again afterwards.
  made=()
  for folder in /var/lib/pushtrace /var/log/nginx; do [ -d "$folder" ] || made+=("$folder"); done
  status=0
  unshare --mount --net --propagation private "$0" --inside "$work" || status=$?
  for folder in "${made[@]}"; do rmdir "$folder" 2>/dev/null || true; done
  exit "$status"
fi

work=$2
ip link set lo up
mount --bind "$work/root/etc" /etc
mount --bind "$work/root/bin" /usr/local/bin
for folder in /var/lib/pushtrace /var/backups /var/log/nginx /run; do
  mkdir -p "$folder"
  mount -t tmpfs tmpfs "$folder"
done
server_pid=""
trusted=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  [ ! -s /run/nginx.pid ] || kill "$(cat /run/nginx.pid)" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

start_pushtrace() {
  run_unit /etc/systemd/system/pushtrace.service 2> "$work/server.log" &
  server_pid=$!
  wait_healthy http://127.0.0.1:8080 && return
  cat "$work/server.log"; echo "walkthrough-test: the service did not start"; exit 1
}
stop_pushtrace() {
  kill -TERM "$server_pid"
  wait "$server_pid" || { echo "walkthrough-test: the service exited with $? on SIGTERM"; exit 1; }
  server_pid=""
}
systemd_line() {
  case "$1" in
    "systemctl daemon-reload") echo "  (systemd reads the unit: nothing to do here)" ;;
    "systemctl enable --now pushtrace"|"systemctl start pushtrace") start_pushtrace ;;
    "systemctl stop pushtrace") stop_pushtrace ;;
    "systemctl restart pushtrace") stop_pushtrace; start_pushtrace ;;
    "systemctl reload nginx") if [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then nginx -s reload; else nginx; fi ;;
    "systemctl restart systemd-journald"|"journalctl -u pushtrace --since today")
      echo "  (no journal in this container; the server's log is $work/server.log)" ;;
    *) echo "walkthrough-test: a systemd line it does not know how to carry out: $1"; exit 1 ;;
  esac
}
# The test's own checks, between the document's blocks.
after_block() {
  # The walk-through's certificate, trusted once it exists (curl, Python and the CLI read the system's bundle).
  if [ -z "$trusted" ] && [ -f /etc/pushtrace/tls/fullchain.pem ]; then
    cat /etc/pushtrace/tls/fullchain.pem >> /etc/ssl/certs/ca-certificates.crt
    trusted=yes
  fi
  # After the backup is checked: one more bundle, which the restore must take away.
  if [ "${1:-}" = backup-checked ]; then
    later_id=after-backup-$RANDOM$RANDOM
    now=$(date +%s%3N)
    printf '%s\n' '{"type":"manifest","schema":1,"bundle_id":"'"$later_id"'","app_id":"net.rorklab.dailypick","device_id":"d-walk"}' \
      '{"type":"event","ts":'"$now"',"process":"service","event":"service.received","notification_id":"'"$later_id"'"}' \
      | gzip > "$work/later.gz"
    curl --fail -sS -o /dev/null -H "Authorization: Bearer $(cat ingest.token)" -H "Content-Encoding: gzip" \
      --data-binary @"$work/later.gz" https://push.example.com/v1/bundles
    PUSHTRACE_TOKEN=$(cat read.token) pushtrace why "$later_id" --server https://push.example.com --format json \
      > "$work/later.json"
    grep -q '"cause"' "$work/later.json" || { echo "walkthrough-test: the bundle uploaded after the backup has no why"; exit 1; }
    echo "  (test: uploaded $later_id after the backup)"
  fi
}

mkdir -p "$work/host"
cd "$work/host"
. "$work/walkthrough.sh"

echo
echo "== the test's checks after the walk-through"
status=0
PUSHTRACE_TOKEN=$(cat read.token) pushtrace why "$later_id" --server https://push.example.com > "$work/later.txt" 2>&1 || status=$?
grep -q "unknown_notification" "$work/later.txt" \
  || { cat "$work/later.txt"; echo "walkthrough-test: the restore did not take away the bundle uploaded after the backup"; exit 1; }
echo "  ok: the bundle uploaded after the backup is gone after the restore (why answers unknown_notification, exit $status)"
PUSHTRACE_TOKEN=$(cat read.token) pushtrace why "$id" --server https://push.example.com --format json > "$work/first.json"
grep -q '"cause"' "$work/first.json" || { echo "walkthrough-test: no why for $id after the rollback"; exit 1; }
echo "  ok: after the rollback, why $id answers through TLS: $(grep -o '"cause" *: *"[^"]*"' "$work/first.json")"
owner=$(stat -c %U /var/lib/pushtrace/pushtrace.sqlite)
[ "$owner" = pushtrace ] || { echo "walkthrough-test: the store is owned by $owner"; exit 1; }
echo "  ok: the store's file is the service user's ($owner, mode $(stat -c %a /var/lib/pushtrace/pushtrace.sqlite))"
echo "walkthrough-test: docs/deploy.md's walk-through ran as written"
