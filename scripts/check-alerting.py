#!/usr/bin/env python3
"""The alerting leg of make check-dashboards: a campaign's timeout spike, from the live server to a webhook.

Usage: check-alerting.py SERVER_URL ADMIN_TOKEN WEBHOOK_PORT

It listens on 127.0.0.1:WEBHOOK_PORT as the webhook receiver Alertmanager posts to (dashboards/README.md shows the
route), then uploads the demo's campaign shape to the server as an app would: net.rorklab.dailypick sends DAILY_PICK
to 300 new devices within ten minutes, ending now, and 40% of their service extensions time out. The server's alert
monitor fires service_timeout_spike; Prometheus (dashboards/pushtrace-rules.yml) turns pushtrace_alert_firing into
PushtraceRuleFiring and sends it to Alertmanager, which posts it here. The check reads the alert's labels and
annotations. Then the image host recovers: 6,000 more DAILY_PICK pushes in the same hour, all delivered, bring the
window's rate back under the rule, and the alert must come back resolved.
"""
import gzip
import http.server
import json
import random
import sys
import threading
import time
import urllib.request
import uuid

server, token, webhook_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
APP, CATEGORY, RULE = "net.rorklab.dailypick", "DAILY_PICK", "service_timeout_spike"
received = []  # every alert of every webhook post, with the post's status
arrived = threading.Condition()


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with arrived:
            for alert in body["alerts"]:
                received.append(dict(alert, receiver=body["receiver"], group_status=body["status"]))
            arrived.notify_all()
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def upload(path, lines):
    body = gzip.compress(("\n".join(json.dumps(line) for line in lines) + "\n").encode())
    request = urllib.request.Request(server + path, data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
    answer = json.load(urllib.request.urlopen(request, timeout=30))
    assert answer["rejected"] == 0, answer


def campaign(count, timeout_share, seed, per_device=1):
    """count DAILY_PICK pushes to new devices (per_device each) over the ten minutes before now: the backend's
    push.sent and APNs answer, and each device's service extension, delivered in 0.3 to 3 s or expired after 30 s;
    each device uploads its records in one bundle."""
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    server_lines = [{"type": "manifest", "schema": 1, "bundle_id": str(uuid.uuid4()), "app_id": APP}]
    devices = {}
    for index in range(count):
        notification, device = str(uuid.uuid4()), f"d-c{seed:02d}{index // per_device:04d}"
        sent = now - 600_000 + index * 600_000 // count - 40_000
        server_lines += [
            {"type": "event", "ts": sent, "process": "server", "event": "push.sent", "notification_id": notification,
             "category": CATEGORY, "mutable_content": True, "has_alert": True, "payload_bytes": 1200,
             "device_id": device, "attachment_url": "https://img.dailypick.net/push/campaign.jpg"},
            {"type": "event", "ts": sent + 90, "process": "server", "event": "push.apns_response",
             "notification_id": notification, "status": 200}]
        started = sent + rng.randint(300, 2_000)
        steps = [{"type": "event", "ts": started, "process": "service", "event": "service.received",
                  "notification_id": notification, "category": CATEGORY}]
        if rng.random() < timeout_share:
            steps.append({"type": "event", "ts": started + 29_800, "process": "service", "event": "service.expired",
                          "notification_id": notification, "elapsed_ms": 29_800})
        else:
            elapsed = rng.randint(300, 3_000)
            steps.append({"type": "event", "ts": started + elapsed, "process": "service",
                          "event": "service.delivered", "notification_id": notification, "elapsed_ms": elapsed})
        devices.setdefault(device, []).extend(steps)
    for device, steps in devices.items():
        upload("/v1/bundles", [{"type": "manifest", "schema": 1, "bundle_id": str(uuid.uuid4()), "app_id": APP,
                                "device_id": device, "app_version": "2.4.0", "os": "iOS 18.1",
                                "uploaded_at": int(time.time() * 1000)}] + steps)
    upload("/v1/events", server_lines)


def wait_for(status, timeout):
    deadline = time.monotonic() + timeout
    with arrived:
        while True:
            for alert in received:
                labels = alert["labels"]
                if (alert["status"] == status and labels.get("alertname") == "PushtraceRuleFiring"
                        and labels.get("rule") == RULE):
                    return alert
            left = deadline - time.monotonic()
            if left <= 0:
                request = urllib.request.Request(server + "/v1/alerts", headers={"Authorization": f"Bearer {token}"})
                judged = urllib.request.urlopen(request, timeout=30).read().decode()
                raise SystemExit(f"no {status} PushtraceRuleFiring for {RULE} reached the webhook in {timeout} s; "
                                 f"it received: {json.dumps(received)[:2000]}; the server's GET /v1/alerts: {judged[:2000]}")
            arrived.wait(left)


listener = http.server.ThreadingHTTPServer(("127.0.0.1", webhook_port), Receiver)
threading.Thread(target=listener.serve_forever, daemon=True).start()

started = time.monotonic()
campaign(300, 0.4, seed=1)
print(f"  the campaign uploaded: 300 DAILY_PICK pushes over the last ten minutes, 40% of the extensions timing out")
firing = wait_for("firing", 120)
print(f"  the webhook received it {time.monotonic() - started:.1f} s after the upload began, "
      f"from receiver {firing['receiver']}:")
labels, annotations = firing["labels"], firing["annotations"]
for key in sorted(labels):
    print(f"    label {key}={labels[key]}")
for key in sorted(annotations):
    print(f"    annotation {key}: {annotations[key]}")
problems = []
if labels.get("app") != APP or labels.get("category") != CATEGORY:
    problems.append(f"labels app/category: {labels.get('app')}/{labels.get('category')}, not {APP}/{CATEGORY}")
summary = annotations.get("summary", "")
if summary.count("%") < 2 or "baseline" not in summary:
    problems.append(f"the summary gives no rate and baseline: {summary!r}")
description = annotations.get("description", "")
for command in ("pushtrace search", "pushtrace why"):
    if command not in description:
        problems.append(f"the description does not name {command}: {description!r}")
if "docs/alerts.md" not in annotations.get("runbook_url", ""):
    problems.append(f"the runbook_url is not the runbook: {annotations.get('runbook_url')!r}")
# The server runs with --public-url https://push.example.com: the alert links to its notifications in the console.
expected_console = f"https://push.example.com/ui/search?app={APP}&category={CATEGORY}"
if annotations.get("console_url") != expected_console:
    problems.append(f"the console_url is not the console's search {expected_console!r}: {annotations.get('console_url')!r}")
if problems:
    raise SystemExit("the alert as it reached the webhook:\n  " + "\n  ".join(problems))

resolving = time.monotonic()
campaign(6000, 0.0, seed=2, per_device=50)
print("  the image host recovered: 6,000 more DAILY_PICK pushes in the hour, every one delivered")
resolved = wait_for("resolved", 120)
print(f"  the webhook received it resolved {time.monotonic() - resolving:.1f} s later (ends at {resolved['endsAt']})")
