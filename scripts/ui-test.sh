#!/usr/bin/env bash
# make ui-test: the console (docs/console.md) in Debian's chromium, headless, driven by chromedriver and selenium,
# over the demo's simulated apps: sign-in, search by cause to every demo example's why page (against
# `pushtrace why --format json`), the report page against the report's JSON, live follow of an upload, tenancy, the
# security headers, no request to another origin, no console error, and axe-core on every page. Once against the
# server itself, then again through deploy/nginx.conf's TLS site, where the session cookie must be Secure. The
# screenshots of docs/screenshots/ are taken on the way (UI_SCREENSHOTS=0 skips them).
# Run from the repository root after `make build`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=${BIN:-.build/debug/pushtrace}
venv=.build/ui-test-venv
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import selenium, axe_selenium_python' 2>/dev/null; then
  echo "== installing selenium 4.38.0 and axe-selenium-python 2.1.6 into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q selenium==4.38.0 axe-selenium-python==2.1.6
fi

# The demo's simulation, its incident forty minutes ago, so that the overview's last 24 hours and the alert firing
# now have something to show.
incident=$(date -u -d '-40 min' +%Y-%m-%dT%H:%M:00Z)
end=$(date -u -d "$incident +4 hour" +%Y-%m-%dT%H:00:00Z)
echo "== pushtrace simulate --notifications 600 --seed 42 --incident $incident --end $end"
"$bin" simulate --out "$work/bundles" --notifications 600 --seed 42 --incident "$incident" --end "$end" >/dev/null
db="$work/pushtrace.sqlite"
"$bin" ingest --db "$db" $(find "$work/bundles" -name '*.ndjson*' | sort) >/dev/null
app=net.rorklab.dailypick
admin=$("$bin" token create --db "$db" --scope admin --label ui-test 2>/dev/null)
read_token=$("$bin" token create --db "$db" --app "$app" --scope read 2>/dev/null)
ingest=$("$bin" token create --db "$db" --app "$app" --scope ingest 2>/dev/null)
port=$(free_port)
"$bin" serve --db "$db" --port "$port" --trusted-proxy 127.0.0.1 --log-level warning 2> "$work/server.log" &
pids+=($!)
wait_healthy "http://127.0.0.1:$port" 100 0.1 || { cat "$work/server.log"; echo "the server did not start" >&2; exit 1; }

run() {
  "$venv/bin/python" scripts/ui-test.py --bin "$bin" --db "$db" --app "$app" --admin "$admin" --read "$read_token" \
    --ingest "$ingest" "$@"
}
echo "== the console at http://127.0.0.1:$port/ui/"
screenshots=()
[ "${UI_SCREENSHOTS:-1}" = 0 ] || screenshots=(--screenshots docs/screenshots)
run --base "http://127.0.0.1:$port" "${screenshots[@]}"

echo "== the console through deploy/nginx.conf's TLS site"
tls_port=$(free_port)
start_tls_site "$work" "$port" "$tls_port"
pids+=($!)
wait_healthy "https://localhost:$tls_port" 100 0.1 --cacert "$work/fullchain.pem" || { echo "nginx did not start" >&2; exit 1; }
run --base "https://localhost:$tls_port" --cafile "$work/fullchain.pem" --secure
if grep -q "internal error" "$work/server.log"; then
  echo "ui-test: the server logged internal errors:"; grep "internal error" "$work/server.log" | head; exit 1
fi
echo "ui-test: passed"
