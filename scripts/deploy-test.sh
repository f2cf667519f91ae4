#!/usr/bin/env bash
# make deploy-test: deploy/pushtrace.service checked by systemd-analyze, then deploy/nginx.conf, as shipped but for
# its ports and certificate paths, run by Debian's nginx with a self-signed certificate in front of a live
# `pushtrace serve --trusted-proxy 127.0.0.1`. Through TLS: a gzip bundle uploaded with curl (with
# `Expect: 100-continue`) and with Python's urllib, a body over the limit answered 413 as JSON, a why read back,
# HEAD, and the client's address in the server's log; the site's HSTS, TLS profile, body limit off the upload paths,
# and per-address limits on 401s and logins. Run from the repository root after `make build`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=${BIN:-.build/debug/pushtrace}
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "deploy-test: FAILED: $*" >&2; exit 1; }

echo "== systemd-analyze verify deploy/pushtrace.service"
# The unit as shipped, its ExecStart pointed at this build (verify checks that the binary exists).
mkdir -p "$work/unit"
sed "s#/usr/local/bin/pushtrace#$(realpath "$bin")#" deploy/pushtrace.service > "$work/unit/pushtrace.service"
systemd-analyze verify "$work/unit/pushtrace.service"
score=$(systemd-analyze security --offline=true "$work/unit/pushtrace.service" 2>/dev/null \
  | sed -n 's/.*Overall exposure level for pushtrace.service: \([0-9.]*\).*/\1/p')
echo "  clean; systemd-analyze security: exposure $score"
[ -n "$score" ] || fail "systemd-analyze security gave no score"
# The store comes from the 0600 environment file only: a flag in ExecStart would beat PUSHTRACE_DB there and put a
# PostgreSQL URL in the 0644 unit and in ps.
exec_start=$(sed -n 's/^ExecStart=//p' deploy/pushtrace.service)
[ "$exec_start" = "/usr/local/bin/pushtrace serve" ] || fail "the unit's ExecStart carries settings: $exec_start"
grep -q '^PUSHTRACE_DB=' deploy/pushtrace.env || fail "deploy/pushtrace.env names no store"
echo "  ExecStart: $exec_start; the store from deploy/pushtrace.env's PUSHTRACE_DB"

echo "== nginx $(nginx -v 2>&1 | sed 's#.*/##') with TLS in front of pushtrace serve"
port=$(free_port)
tls_port=$(free_port)
db="$work/pushtrace.sqlite"
app=net.rorklab.dailypick
"$bin" simulate --out "$work/bundles" --notifications 40 --seed 5 >/dev/null
ingest=$("$bin" token create --db "$db" --app "$app" --scope ingest 2>/dev/null)
read_token=$("$bin" token create --db "$db" --app "$app" --scope read 2>/dev/null)
"$bin" serve --db "$db" --port "$port" --trusted-proxy 127.0.0.1 --log-level info 2> "$work/server.log" &
pids+=($!)
wait_healthy "http://127.0.0.1:$port" 100 0.1 || { echo "the server did not start" >&2; exit 1; }

# The shipped site, with this test's ports and files; nginx's own frame (pid, logs, temp folders) around it.
start_tls_site "$work" "$port" "$tls_port" || fail "the nginx site"
pids+=($!)
base="https://localhost:$tls_port"
wait_healthy "$base" 100 0.1 --cacert "$work/fullchain.pem" || { echo "the server did not start" >&2; exit 1; }

python3 - "$base" "$work" "$ingest" "$read_token" "$app" <<'PY'
import glob, gzip, http.client, json, os, ssl, subprocess, sys, urllib.request, urllib.error
base, work, ingest, read_token, app = sys.argv[1:]
cafile = os.path.join(work, "fullchain.pem")
context = ssl.create_default_context(cafile=cafile)
checks = 0
def check(condition, what):
    global checks
    if not condition: sys.exit(f"deploy-test: FAILED: {what}")
    checks += 1
    print(f"  ok: {what}")

files = sorted(glob.glob(os.path.join(work, "bundles", app, "*.gz")))
check(len(files) >= 2, f"the simulator wrote {len(files)} gzip bundles of {app}")

# curl: a gzip bundle, Expect: 100-continue, through TLS; the client's address as the server logs it.
curl = subprocess.run(["curl", "-sS", "--cacert", cafile, "--interface", "127.0.0.2", "-o", "-", "-w", "\n%{http_code}",
                       "-H", f"Authorization: Bearer {ingest}", "-H", "Content-Encoding: gzip",
                       "-H", "Content-Type: application/x-ndjson", "-H", "Expect: 100-continue",
                       "-H", "X-Forwarded-For: 203.0.113.9",
                       "--data-binary", f"@{files[0]}", f"{base}/v1/bundles"], capture_output=True, text=True)
body, _, status = curl.stdout.rpartition("\n")
check(status == "200" and json.loads(body)["duplicate"] is False and json.loads(body)["accepted"] > 0,
      f"curl uploads a gzip bundle with Expect: 100-continue: {status} {body[:100]}")

# urllib: another bundle, then the same again (duplicate).
def upload(path):
    data = open(path, "rb").read()
    request = urllib.request.Request(f"{base}/v1/bundles", data=data, method="POST", headers={
        "Authorization": f"Bearer {ingest}", "Content-Encoding": "gzip", "Content-Type": "application/x-ndjson"})
    with urllib.request.urlopen(request, context=context) as response:
        return response.status, json.load(response)
status, answer = upload(files[1])
check(status == 200 and answer["duplicate"] is False and answer["accepted"] > 0,
      f"urllib uploads a gzip bundle: {status}, {answer['accepted']} lines accepted")
status, answer = upload(files[1])
check(status == 200 and answer["duplicate"] is True, "the same bundle again is answered duplicate")

# A body over the limit: 413, JSON, from the proxy.
big = os.urandom(17 * 1024 * 1024)
request = urllib.request.Request(f"{base}/v1/bundles", data=big, method="POST", headers={
    "Authorization": f"Bearer {ingest}", "Content-Encoding": "gzip"})
try:
    urllib.request.urlopen(request, context=context)
    check(False, "a 17 MiB body was refused")
except urllib.error.HTTPError as error:
    answer = json.loads(error.read())
    check(error.code == 413 and error.headers.get_content_type() == "application/json" and answer["error"] == "too_large",
          f"a 17 MiB body is answered 413 as JSON: {answer}")

# A why read back through TLS, for a notification of the uploaded bundles.
ids = []
for path in files[:2]:
    for line in gzip.open(path, "rt"):
        record = json.loads(line)
        if record.get("notification_id"): ids.append(record["notification_id"])
check(len(ids) > 0, f"the uploaded bundles name {len(set(ids))} notifications")
request = urllib.request.Request(f"{base}/v1/notifications/{ids[0]}", headers={"Authorization": f"Bearer {read_token}"})
with urllib.request.urlopen(request, context=context) as response:
    why = json.load(response)
check(response.status == 200 and why.get("notification_id", "").lower() == ids[0].lower() and why.get("cause"),
      f"why {ids[0]} read back: cause {why.get('cause')}")

# HEAD through the proxy.
connection = http.client.HTTPSConnection(base.split("//")[1].split(":")[0], int(base.rsplit(":", 1)[1]), context=context)
connection.request("HEAD", "/healthz")
response = connection.getresponse()
check(response.status == 200 and response.read() == b"", "HEAD /healthz: 200, no body")

# The server's log names the client: curl's address (127.0.0.2) from the proxy's X-Forwarded-For, not the
# address curl claimed, nor the proxy's.
log = open(os.path.join(work, "server.log")).read()
stored = [line for line in log.splitlines() if "bundle stored" in line]
check(len(stored) >= 2, f"the server logged {len(stored)} stored bundles")
check("client=127.0.0.2" in stored[0] and "203.0.113.9" not in log, f"the client's address logged: {stored[0][-120:]}")

# The site's own rules: HSTS on every answer, Mozilla's intermediate TLS, 1 KiB bodies off the upload paths, and
# 401s and logins limited per client address.
host, port = base.split("//")[1].split(":")[0], int(base.rsplit(":", 1)[1])
def exchange(method, path, body=None, headers={}, source="127.0.0.1"):
    connection = http.client.HTTPSConnection(host, port, context=context, source_address=(source, 0))
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    answer = (response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read())
    connection.close()
    return answer
for method, path, headers in [("GET", "/healthz", {}), ("GET", "/v1/notifications/x", {}),
                              ("GET", "/v1/notifications/x", {"Authorization": f"Bearer {read_token}"})]:
    status, headers, _ = exchange(method, path, headers=headers)
    check(headers.get("strict-transport-security") == "max-age=63072000", f"HSTS on {method} {path} ({status})")
def handshake(*arguments):
    return subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost",
                           *arguments], input="", capture_output=True, text=True, timeout=20).returncode == 0
check(handshake("-tls1_3") and handshake("-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"),
      "TLS 1.3 and TLS 1.2 with ECDHE-RSA-AES128-GCM-SHA256 are taken")
check(not handshake("-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA:AES128-GCM-SHA256:AES128-SHA256"),
      "TLS 1.2 without forward secrecy or without AEAD (ECDHE-RSA-AES128-SHA, AES128-GCM-SHA256) is refused")
check(not handshake("-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"), "TLS 1.1 is refused")
status, headers, body = exchange("POST", "/v1/notifications/x", body=b"x" * 2048,
                                 headers={"Authorization": f"Bearer {read_token}", "Content-Type": "application/json"})
check(status == 413 and json.loads(body)["error"] == "too_large", f"2 KiB to a path that is no upload: {status} {body[:80]}")
statuses = [exchange("GET", "/v1/notifications/x", headers={"Authorization": "Bearer pt_000000000000_made-up"},
                     source="127.0.0.3")[0:3:2] for _ in range(40)]
limited = [(status, body) for status, body in statuses if status == 429]
check(statuses[0][0] == 401 and "request_id" in json.loads(statuses[0][1]) and len(limited) >= 15 and json.loads(limited[0][1])["error"] == "overloaded",
      f"40 made-up tokens from one address: {sum(1 for s, _ in statuses if s == 401)} answered 401, then {len(limited)} 429")
status, _, _ = exchange("GET", "/v1/notifications/x", headers={"Authorization": f"Bearer {read_token}"}, source="127.0.0.3")
check(status == 404, f"that address's valid token is still answered ({status})")
logins = [exchange("POST", "/ui/login", body=b"token=x", headers={"Content-Type": "application/x-www-form-urlencoded"},
                   source="127.0.0.4")[0] for _ in range(12)]
check(logins.count(429) >= 5, f"12 logins at once from one address: {logins.count(429)} answered 429")
print(f"deploy-test: {checks} checks passed")
PY
