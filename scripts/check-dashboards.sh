#!/usr/bin/env bash
# make check-dashboards: promtool's checks and rule tests, then a real Prometheus scraping a live pushtrace server fed
# with simulated data, asked through its HTTP API for every panel query of the Grafana dashboard: each must return
# at least one series. Then alerting end to end: a campaign's timeout spike uploaded to the server fires its rule,
# Prometheus sends PushtraceRuleFiring to a real Alertmanager, which posts it to a webhook receiver; its labels and
# annotations are checked, and it must come back resolved once the spike ends (scripts/check-alerting.py).
# Run from the repository root after `make build`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rules=dashboards/pushtrace-rules.yml
dashboard=dashboards/pushtrace-dashboard.json
bin=.build/debug/pushtrace
load=.build/debug/pushtrace-load

echo "== promtool check rules"
promtool check rules "$rules"
echo "== promtool test rules"
promtool test rules dashboards/tests/rules-test.yml

echo "== a live pushtrace server, scraped by Prometheus $(prometheus --version 2>&1 | head -n 1 | awk '{print $3}')"
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(free_port)
prom_port=$(free_port)
am_port=$(free_port)
hook_port=$(free_port)
now_ms=$(now_ms)
"$bin" simulate --out "$work/bundles" --notifications 1500 --days 1 --end "$now_ms" --seed 3 >/dev/null
token=$("$bin" token create --db "$work/pushtrace.sqlite" --scope admin --label dashboards 2>/dev/null)
# Prometheus scrapes with a metrics token, as dashboards/README.md says: without one, /metrics names no app.
"$bin" token create --db "$work/pushtrace.sqlite" --scope metrics --label prometheus > "$work/metrics-token" 2>/dev/null
"$bin" serve --db "$work/pushtrace.sqlite" --port "$port" --alert-interval 1 --public-url https://push.example.com \
  --log-level warning 2> "$work/server.log" &
pids+=($!)
wait_healthy "http://127.0.0.1:$port" 100 0.1 || { echo "the server did not start" >&2; exit 1; }

# Alertmanager with the route of dashboards/README.md, its waits shortened for a test, posting to the webhook
# receiver that scripts/check-alerting.py runs.
cat > "$work/alertmanager.yml" <<YAML
route:
  receiver: pushtrace-oncall
  group_by: [alertname, rule, app, category]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: pushtrace-oncall
    webhook_configs:
      - url: http://127.0.0.1:$hook_port/alerts
        send_resolved: true
YAML
prometheus-alertmanager --config.file="$work/alertmanager.yml" --storage.path="$work/alertmanager" \
  --web.listen-address="127.0.0.1:$am_port" --cluster.listen-address= --log.level=warn >"$work/alertmanager.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$am_port/-/ready" >/dev/null && break; sleep 0.1; done

cat > "$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["127.0.0.1:$am_port"]
rule_files:
  - $PWD/$rules
scrape_configs:
  - job_name: pushtrace
    authorization:
      credentials_file: $work/metrics-token
    static_configs:
      - targets: ["127.0.0.1:$port"]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null && break; sleep 0.1; done

echo "== uploading the simulated bundles"
PUSHTRACE_TOKEN=$token "$load" --server "http://127.0.0.1:$port" --concurrency 8 --replay "$work/bundles" | tail -n 3
# The notifications-by-cause gauge follows as causes settle; the queries below then wait until Prometheus has scraped
# often enough for every rate to have two points (on a loaded machine a scrape can time out and be skipped).
for _ in $(seq 1 100); do curl -s -H "Authorization: Bearer $(cat "$work/metrics-token")" "http://127.0.0.1:$port/metrics" | grep -q '^pushtrace_notifications{' && break; sleep 0.2; done

echo "== every panel query of $dashboard through Prometheus's HTTP API"
python3 - "$dashboard" "http://127.0.0.1:$prom_port" <<'PY' || { echo "== prometheus.log"; tail -n 20 "$work/prometheus.log"; exit 1; }
import json, sys, time, urllib.parse, urllib.request
dashboard, prometheus = json.load(open(sys.argv[1])), sys.argv[2]
def query(expr):
    url = prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    answer = json.load(urllib.request.urlopen(url))
    if answer.get("status") != "success":
        raise SystemExit(f"query failed: {expr}: {answer}")
    return answer["data"]["result"]
def check(report):
    failed = 0
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            # Grafana's variables, as the dashboard would set them for "All" apps over a short range.
            expr = (target["expr"].replace("$__rate_interval", "30s").replace("$__range", "5m")
                    .replace('"$app"', '".*"'))
            series = query(expr)
            failed += not series
            if report:
                print(f"{'ok  ' if series else 'FAIL'} {len(series):3d} series  "
                      f"{panel['title']} / {target.get('legendFormat', '')}")
    return failed
# Poll (up to 60 s) rather than sleep a fixed time: rates need two scrapes after the counters first appear.
deadline = time.monotonic() + 60
while check(report=False) and time.monotonic() < deadline:
    time.sleep(1)
failed = check(report=True)
for target in json.load(urllib.request.urlopen(prometheus + "/api/v1/targets"))["data"]["activeTargets"]:
    print(f"scrape target {target['scrapeUrl']}: {target['health']} {target.get('lastError', '')}"
          f"(last scrape took {float(target.get('lastScrapeDuration', 0)) * 1000:.1f} ms)")
rules = json.load(urllib.request.urlopen(prometheus + "/api/v1/rules"))["data"]["groups"]
broken = [r["name"] for g in rules for r in g["rules"] if r.get("health") not in ("ok", "unknown")]
print(f"Prometheus loaded {sum(len(g['rules']) for g in rules)} rules in {len(rules)} groups; unhealthy: {broken or 'none'}")
if failed or broken:
    raise SystemExit(f"{failed} panel queries returned no series; {len(broken)} rules unhealthy")
PY

echo "== alerting: the server's rule, Prometheus, Alertmanager $(prometheus-alertmanager --version 2>&1 | head -n 1 | awk '{print $3}'), a webhook receiver"
python3 scripts/check-alerting.py "http://127.0.0.1:$port" "$token" "$hook_port" || {
  echo "== alertmanager.log"; tail -n 20 "$work/alertmanager.log"; echo "== prometheus.log"; tail -n 20 "$work/prometheus.log"
  echo "== the server's log"; tail -n 20 "$work/server.log"
  exit 1; }
echo "check-dashboards: all panels return data; the alert reached Alertmanager's webhook and resolved"
