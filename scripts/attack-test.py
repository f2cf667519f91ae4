#!/usr/bin/env python3
"""The hostile-client suite of `make attack-test` (scripts/attack-test.sh starts the server and makes the tokens).

Each attack sends what a stranger holding an app's ingest token (or a read token) could send, and checks the
server's answer. After every attack the server must still answer /healthz and store an honest upload from another
app. Prints one line per attack and closes with "attack-test: N passed, N failed".
"""
import argparse, gzip, http.client, json, os, shutil, socket, subprocess, sys, tempfile, threading, time, uuid

INT64_MAX, INT64_MIN = 9223372036854775807, -9223372036854775808
NOW_MS = int(time.time() * 1000)

p = argparse.ArgumentParser()
for name in ("port", "pid", "budget-mib"):
    p.add_argument("--" + name, type=int, required=True)
for name in ("log", "db", "bin", "ingest-a", "ingest-b", "read-a", "admin", "metrics"):
    p.add_argument("--" + name, required=True)
p.add_argument("--others", nargs="+", required=True)
p.add_argument("--engine", choices=("sqlite", "postgres"), default="sqlite",
               help="the server's store: every attack runs on SQLite; on PostgreSQL, those on the store's own bounds")
p.add_argument("--only", default="", help="run only the attacks whose name holds this text (ATTACKS= of attack-test.sh)")
args = p.parse_args()
HOSTILE, HONEST = "net.example.hostile", "net.example.honest"


# ---------------------------------------------------------------- helpers

def request(method, path, token=None, body=b"", headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=timeout)
    all_headers = dict(headers or {})
    if token:
        all_headers["Authorization"] = "Bearer " + token
    conn.request(method, path, body=body, headers=all_headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def ndjson(objects):
    return b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objects)


def manifest(app, device="d-attack", **extra):
    m = {"type": "manifest", "schema": 1, "bundle_id": str(uuid.uuid4()), "app_id": app, "device_id": device}
    m.update(extra)
    return m


def event(nid, ts=None, **fields):
    record = {"type": "event", "ts": NOW_MS if ts is None else ts, "process": "service",
              "event": "service.received", "notification_id": nid}
    record.update(fields)
    return record


def upload(token, body, encoding="identity", path="/v1/bundles", headers=None):
    h = {"Content-Type": "application/x-ndjson", "Content-Encoding": encoding}
    h.update(headers or {})
    if encoding == "gzip":
        body = gzip.compress(body, 1)
    return request("POST", path, token, body, h)


def honest(records=3):
    nid = str(uuid.uuid4())
    body = ndjson([manifest(HONEST, uploaded_at=int(time.time() * 1000))] + [event(nid) for _ in range(records)])
    status, _, data = upload(args.ingest_b, body, "gzip")
    return status, data


def rss_mib():
    with open(f"/proc/{args.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("the server is gone")


def server_log():
    with open(args.log, "rb") as f:
        return f.read()


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def error_body(data):
    body = json.loads(data)
    expect("error" in body and "message" in body and "request_id" in body, f"error body {body}")
    return body


def cli(*arguments):
    return subprocess.run([args.bin, *arguments], capture_output=True, timeout=60)


class HeldUpload:
    """An upload sent all but its last bytes, then held open."""

    def __init__(self, token, body, hold=200, chunked=False):
        self.sock = socket.create_connection(("127.0.0.1", args.port), timeout=30)
        head = (f"POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: application/x-ndjson\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n")
        self.sock.sendall(head.encode())
        self.rest = body[len(body) - hold:]
        self.offset = 0
        try:
            self.sock.sendall(body[:len(body) - hold])
        except OSError:
            pass
        self.answer = None

    def poll(self):
        """The status line, if the server has answered yet."""
        if self.answer is None:
            self.sock.setblocking(False)
            try:
                data = self.sock.recv(65536)
                self.answer = data.split(b"\r\n", 1)[0].decode(errors="replace") if data else "closed"
            except BlockingIOError:
                pass
            except OSError as error:
                self.answer = f"closed ({error.__class__.__name__})"
            self.sock.setblocking(True)
        return self.answer

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------- attacks

attacks = []


def attack(name, engines=("sqlite",)):
    """Registers an attack; `engines` names the stores it runs against (the store's own bounds run on both)."""
    def register(function):
        if args.engine in engines and args.only in name:
            attacks.append((name, function))
        return function
    return register


def metric(text, name):
    """The value of one series in a Prometheus exposition, 0 when absent."""
    for line in text.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * len(ordered) + 0.5)) - 1))]


BOTH = ("sqlite", "postgres")


@attack("one bundle of 400,000 bad lines: answered with every line counted, while another app's uploads answer 200 "
        "with p99 under 1 s", BOTH)
def _():
    body = gzip.compress(ndjson([manifest(HOSTILE)]) + b"x\n" * 400_000, 6)
    answer = {}

    def send():
        conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=300)
        conn.request("POST", "/v1/bundles", body, {"Authorization": "Bearer " + args.ingest_a,
                                                  "Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"})
        response = conn.getresponse()
        answer["status"], answer["data"] = response.status, response.read()
        conn.close()

    sender = threading.Thread(target=send)
    sender.start()
    latencies, statuses = [], []
    while sender.is_alive() or len(latencies) < 20:
        started = time.time()
        status, _ = honest()
        latencies.append(time.time() - started)
        statuses.append(status)
    sender.join()
    expect(answer.get("status") == 200, f"the bad bundle: {answer.get('status')} {answer.get('data', b'')[:300]}")
    counts = json.loads(answer["data"])
    expect(counts["rejected"] == 400_000 and counts["accepted"] == 0, f"counts {counts}")
    expect(all(status == 200 for status in statuses), f"honest uploads answered {sorted(set(statuses))}")
    p99 = percentile(latencies, 0.99)
    print(f"     {len(latencies)} honest uploads meanwhile, p99 {p99 * 1000:.0f} ms")
    expect(p99 < 1.0, f"honest uploads' p99 {p99:.2f} s")


@attack("a notification named by 8,000 stored blocks: why answers with the timeline marked as cut; RSS under 300 MB",
        BOTH)
def _():
    nid = str(uuid.uuid4())
    failures = []

    def worker(count):
        conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
        for _ in range(count):
            body = ndjson([manifest(HOSTILE), {"type": "log", "ts": NOW_MS, "process": "service", "level": "info",
                                               "message": "x" * 200, "notification_id": nid}])
            conn.request("POST", "/v1/bundles", body, {"Authorization": "Bearer " + args.ingest_a,
                                                      "Content-Type": "application/x-ndjson"})
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                failures.append(response.status)
        conn.close()

    threads = [threading.Thread(target=worker, args=(1_000,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expect(not failures, f"uploads answered {sorted(set(failures))}")
    peak = 0.0
    for _ in range(3):
        status, _, data = request("GET", f"/v1/notifications/{nid}?app={HOSTILE}", args.read_a, timeout=60)
        peak = max(peak, rss_mib())
        expect(status in (200, 404), f"why: {status} {data[:300]}")
        cut = json.loads(data).get("timeline_cut")
        expect(cut is not None and cut["blocks_read"] < 8_000, f"why did not say the timeline was cut: {data[:300]}")
    print(f"     8,000 blocks: why read {cut['blocks_read']}; server RSS {peak:.0f} MiB")
    expect(peak < 300, f"server RSS {peak:.0f} MiB")


@attack("a first uploader of a new app cannot fix its dictionary for ever: one device trains none, made-up devices "
        "one, and honest devices' volume a newer one that new blocks take", BOTH)
def _():
    app = "net.example.dictionary"
    contains = ("instr(bytes, CAST('EVILMARK' AS BLOB)) > 0" if args.engine == "sqlite"
                else "position('EVILMARK'::bytea in bytes) > 0")
    counter = [0]

    def scalar(sql):
        result = cli("sql", "--db", args.db, "--format", "json", sql)
        expect(result.returncode == 0, f"sql: {result.stderr[:300]}")
        return list(json.loads(result.stdout)[0].values())[0]

    def send(device, lines, marker):
        records = []
        for _ in range(lines):
            counter[0] += 1
            records.append({"type": "log", "ts": NOW_MS, "process": "service", "level": "info",
                            "message": f"{marker} {counter[0]} " + "x" * 120, "notification_id": f"d-{counter[0]}"})
        status, _, data = upload(args.admin, ndjson([manifest(app, device=device)] + records), "gzip")
        expect(status == 200, f"upload: {status} {data[:200]}")

    count = f"SELECT count(*) FROM dictionary WHERE app_id = '{app}'"
    newest_evil = f"SELECT count(*) FROM dictionary WHERE id = (SELECT max(id) FROM dictionary WHERE app_id = '{app}') AND {contains}"
    for _ in range(10):
        send("evil-1", 100, "EVILMARK")
    expect(scalar(count) == 0, "one device's lines trained a dictionary")
    for _ in range(2):
        for device in range(2, 6):
            send(f"evil-{device}", 120, "EVILMARK")
    expect(scalar(count) == 1 and scalar(newest_evil) == 1, "made-up devices did not train the first dictionary")
    for round in range(12):
        for device in range(1, 11):
            send(f"honest-{device}", 90, f"honest{round}")
    dictionaries, evil = scalar(count), scalar(newest_evil)
    print(f"     {dictionaries} dictionaries; the newest trained from the made-up devices: {bool(evil)}")
    expect(dictionaries == 2 and evil == 0, "no newer dictionary from the honest devices")
    send("honest-1", 10, "later")
    newest_block = scalar(f"SELECT r.dictionary FROM record_block r JOIN bundle b ON b.id = r.bundle_ref "
                          f"WHERE b.app_id = '{app}' ORDER BY b.received_at DESC, r.id DESC LIMIT 1")
    expect(newest_block == scalar(f"SELECT max(id) FROM dictionary WHERE app_id = '{app}'"),
           "the newest block is not compressed against the newest dictionary")


@attack("10,000 requests with made-up tokens: each distinct token ID costs at most one store read", BOTH)
def _():
    def lookups():
        status, _, text = request("GET", "/metrics")
        expect(status == 200, f"/metrics {status}")
        return metric(text, 'pushtrace_token_lookups_total{outcome="absent"}')

    before = lookups()
    ids = [uuid.uuid4().hex[:12] for _ in range(2_500)]
    failures = []

    def worker(part):
        conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        for n, token_id in enumerate(part):
            for round in range(4):
                conn.request("GET", "/v1/alerts", headers={"Authorization": f"Bearer pt_{token_id}_guess{round}{n}"})
                response = conn.getresponse()
                response.read()
                if response.status != 401:
                    failures.append(response.status)
        conn.close()

    threads = [threading.Thread(target=worker, args=(ids[k::8],)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expect(not failures, f"answers other than 401: {sorted(set(failures))}")
    reads = lookups() - before
    print(f"     10,000 requests, 2,500 distinct token IDs: {reads:.0f} store reads")
    expect(reads <= len(ids), f"{reads:.0f} store reads for {len(ids)} distinct token IDs")


@attack("uploaded_at 1e11 with a record ts of Int64.max: 400 (was: the server died of an overflow)")
def _():
    body = ndjson([manifest(HOSTILE, uploaded_at=100000000000), event(str(uuid.uuid4()), ts=INT64_MAX)])
    status, _, data = upload(args.ingest_a, body)
    expect(status == 400 and b"uploaded_at" in data, f"{status} {data[:300]}")


@attack("a record ts of Int64.max under a correct clock: stored bundle, that line rejected with its reason")
def _():
    nid = str(uuid.uuid4())
    body = ndjson([manifest(HOSTILE, uploaded_at=int(time.time() * 1000) - 3_600_000), event(nid, ts=INT64_MAX),
                   event(nid)])
    status, _, data = upload(args.ingest_a, body)
    answer = json.loads(data)
    expect(status == 200 and answer["accepted"] == 1 and answer["rejected"] == 1, f"{status} {data[:300]}")
    expect("out of range" in answer["rejections"][0]["reason"], answer["rejections"])


@attack("uploaded_at Int64.max and Int64.min: 400")
def _():
    for value in (INT64_MAX, INT64_MIN):
        status, _, data = upload(args.ingest_a, ndjson([manifest(HOSTILE, uploaded_at=value)]))
        expect(status == 400 and (b"out of range" in data or b"negative" in data), f"{value}: {status} {data[:300]}")


@attack("extreme numbers in records (Int64 ends, 2^53, -0, 1e308, huge exponents, durations, sizes, statuses): each line rejected")
def _():
    nid = str(uuid.uuid4())
    lines = [json.dumps(manifest(HOSTILE)).encode()]
    for ts in (INT64_MAX, INT64_MIN, 2**53, -(2**53), 0, -1, 99999999999999):
        lines.append(json.dumps(event(nid, ts=ts)).encode())
    for raw in (b"-0", b"1e308", b"1E+999999", b"-1e-999", b"1763622000000.5", b"9" * 400):
        lines.append(b'{"type":"event","ts":' + raw + b',"process":"service","event":"service.received","notification_id":"' + nid.encode() + b'"}')
    for field, value in (("duration_ms", INT64_MAX), ("duration_ms", -1), ("bytes", 2**62), ("http_status", 99999)):
        download = event(nid, event="service.download", url_host="x", duration_ms=10)
        download[field] = value
        lines.append(json.dumps(download).encode())
    lines.append(json.dumps(event(nid, event="service.expired", elapsed_ms=INT64_MIN)).encode())
    lines.append(json.dumps(event(nid, process="server", event="push.apns_response", status=INT64_MAX)).encode())
    status, _, data = upload(args.ingest_a, b"\n".join(lines) + b"\n", "gzip")
    answer = json.loads(data)
    expect(status == 200 and answer["accepted"] == 0 and answer["rejected"] == len(lines) - 1, f"{status} {data[:600]}")


@attack("GET /v1/alerts?now= Int64.min, Int64.max, 1e308, -0: 400 (was: a trap in AlertSpans)")
def _():
    for now in ("-9223372036854775808", "9223372036854775807", "1e308", "-0", "99999-01-01"):
        status, _, data = request("GET", "/v1/alerts?now=" + now, args.read_a)
        expect(status == 400, f"now={now}: {status} {data[:200]}")
        error_body(data)
    status, _, _ = request("GET", "/v1/alerts?now=2026-11-25", args.read_a)
    expect(status == 200, f"a plain now: {status}")


@attack("Pushtrace-Received-At: Int64.min from an admin: 400 (was: a trap in ClockCorrection)")
def _():
    body = ndjson([manifest(HOSTILE, uploaded_at=NOW_MS), event(str(uuid.uuid4()))])
    for value in ("-9223372036854775808", "9223372036854775807", "0"):
        status, _, data = upload(args.admin, body, headers={"Pushtrace-Received-At": value})
        expect(status == 400, f"{value}: {status} {data[:200]}")


@attack("search with since/until at the ends of Int64, and an out-of-range limit: 400")
def _():
    for query in ("since=-9223372036854775808", "until=9223372036854775807", "since=1e308", "limit=99999999999999999999"):
        status, _, data = request("GET", "/v1/notifications?" + query, args.read_a)
        expect(status == 400, f"{query}: {status} {data[:200]}")


@attack("log injection: an app_id and query parameters holding a newline and ESC[31m forge no log line")
def _():
    forged = "net.example.hostile\n2026-11-25T00:00:00+0000 error pushtrace : forged=1 \x1b[31mRED"
    status, _, data = upload(args.ingest_a, ndjson([manifest(forged)]))
    expect(status == 400 and b"bundle identifier" in data, f"{status} {data[:300]}")
    for query in ("cause=%0Aforged%1B%5B31m", "since=%0Aforged%1B%5B31m", "category=%0Aforged%1B%5B31m&cause=x"):
        status, _, data = request("GET", "/v1/notifications?" + query, args.read_a)
        expect(status == 400, f"{query}: {status}")
    time.sleep(0.3)
    log = server_log()
    expect(b"\x1b" not in log, "a raw ESC reached the server log")
    expect(not any(line.startswith(b"2026-11-25T00:00:00+0000 error pushtrace : forged") for line in log.split(b"\n")),
           "a forged line reached the server log")


@attack("identifiers validated: a 10 KB app_id, a device_id with ESC, IDs and categories with controls or over 255 bytes")
def _():
    status, _, data = upload(args.ingest_a, ndjson([manifest("a" * 10_000)]))
    expect(status == 400, f"10 KB app_id: {status}")
    status, _, data = upload(args.ingest_a, ndjson([manifest(HOSTILE, device="d\x1b[2J")]))
    expect(status == 400 and b"device_id" in data, f"device_id: {status} {data[:200]}")
    lines = [manifest(HOSTILE), event("id\nforged"), event("x" * 300), event(str(uuid.uuid4()), category="CAT\r\nX"),
             event(str(uuid.uuid4()), category="C" * 256), event("\u202eevil")]
    status, _, data = upload(args.ingest_a, ndjson(lines))
    answer = json.loads(data)
    expect(status == 200 and answer["rejected"] == 5 and answer["accepted"] == 0, f"{status} {data[:400]}")


@attack("/metrics: without a token only the server's own series; ingest and read tokens 403; a metrics token sees apps")
def _():
    honest()
    deadline = time.time() + 10
    status, _, full = request("GET", "/metrics", args.metrics)
    while b'app="' + HONEST.encode() not in full and time.time() < deadline:
        time.sleep(0.5)
        status, _, full = request("GET", "/metrics", args.metrics)
    expect(status == 200 and b'app="' + HONEST.encode() in full, "the metrics token did not see the app series")
    status, _, anonymous = request("GET", "/metrics")
    expect(status == 200 and b"pushtrace_bundles_total" in anonymous and b'app="' not in anonymous,
           "an anonymous scrape saw app series")
    for token in (args.ingest_a, args.read_a):
        status, _, _ = request("GET", "/metrics", token)
        expect(status == 403, f"/metrics with an ingest or read token: {status}")
    status, _, _ = request("GET", "/metrics", "pt_nothing_here")
    expect(status == 401, f"/metrics with an unknown token: {status}")


@attack("a 500 tells the client plain words and a request ID, and the log the SQL error under that ID")
def _():
    sql = lambda statement: subprocess.run(["sqlite3", args.db, ".timeout 10000", statement], check=True,
                                            capture_output=True)
    sql("ALTER TABLE notification RENAME TO notification_hidden")
    try:
        status, headers, data = request("GET", f"/v1/notifications?app={HOSTILE}", args.admin)
    finally:
        sql("ALTER TABLE notification_hidden RENAME TO notification")
    expect(status == 500, f"status {status} {data[:300]}")
    body = error_body(data)
    for leak in (b"SQLite", b"SELECT", b"notification", b"/tmp", b"table"):
        expect(leak not in data, f"the 500 body leaks {leak!r}: {data[:300]}")
    expect(headers.get("x-request-id") == body["request_id"], "X-Request-ID differs from the body's request_id")
    time.sleep(0.3)
    lines = [line for line in server_log().split(b"\n") if body["request_id"].encode() in line]
    expect(any(b"no such table" in line for line in lines), "the log has no SQL error under the request ID")


@attack("every answer carries X-Request-ID")
def _():
    for method, path, token in (("GET", "/healthz", None), ("GET", "/nope", None), ("GET", "/v1/bundles", None),
                                ("GET", "/v1/alerts", args.read_a)):
        status, headers, _ = request(method, path, token)
        expect(headers.get("x-request-id"), f"{method} {path} ({status}) had no X-Request-ID")


@attack("an unauthenticated upload is refused without reading its body: the connection closes")
def _():
    for chunked in (False, True):
        sock = socket.create_connection(("127.0.0.1", args.port), timeout=10)
        framing = "Transfer-Encoding: chunked" if chunked else "Content-Length: 40000000"
        sock.sendall(f"POST /v1/bundles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pt_bad_token\r\n{framing}\r\n\r\n".encode())
        sent, block = 0, b"x" * 65536
        started = time.time()
        try:
            while sent < 40_000_000 and time.time() - started < 15:
                sock.sendall(b"10000\r\n" + block + b"\r\n" if chunked else block)
                sent += len(block)
        except OSError:
            pass
        try:
            answer = sock.recv(65536)
        except OSError:
            answer = b""
        sock.close()
        expect(sent < 16 << 20, f"{'chunked' if chunked else 'sized'}: the server read {sent} bytes after its 401")
        expect(answer == b"" or answer.startswith(b"HTTP/1.1 401"), f"answer {answer[:100]}")


@attack("one token's uploads past its limit get 429 at once; another app is served meanwhile")
def _():
    body = gzip.compress(ndjson([manifest(HOSTILE)] + [event(str(uuid.uuid4()), message="m" * 1000) for _ in range(50)]), 1)
    held = [HeldUpload(args.ingest_a, body, hold=len(body) // 2) for _ in range(40)]
    time.sleep(1.5)
    answers = [h.poll() for h in held]
    refused = sum(1 for a in answers if a and " 429 " in a + " ")
    started = time.time()
    status, data = honest()
    took = time.time() - started
    for h in held:
        h.close()
    expect(refused >= 8, f"{refused} of 40 refused with 429 (the limit is 32): {answers[:5]}")
    expect(status == 200 and took < 5, f"the other app's upload: {status} in {took:.1f} s")


def hostile_body(app=HOSTILE, records=12, size=400_000):
    lines = [manifest(app)] + [
        {"type": "log", "ts": NOW_MS, "process": "service", "level": "info", "notification_id": str(uuid.uuid4()),
         "message": "A" * size} for _ in range(records)]
    return gzip.compress(ndjson(lines), 9)


def hold_50(tokens, meanwhile=lambda: None):
    """50 connections of `tokens` (pairs of a token and its app, in turn) hold uploads open for 6 s, then close; RSS
    before, at its peak, after."""
    baseline = rss_mib()
    bodies = {app: hostile_body(app) for _, app in tokens}
    held = [HeldUpload(tokens[n % len(tokens)][0], bodies[tokens[n % len(tokens)][1]]) for n in range(50)]
    peak, started = baseline, time.time()
    result = meanwhile()
    while time.time() - started < 6:
        peak = max(peak, rss_mib())
        time.sleep(0.2)
    answers = [h.poll() for h in held]
    for h in held:
        h.close()
    time.sleep(4)
    after = rss_mib()
    tally = {}
    for answer in answers:
        tally[answer or "still held"] = tally.get(answer or "still held", 0) + 1
    print(f"    RSS {baseline:.0f} MiB before, peak {peak:.0f} MiB while held, {after:.0f} MiB after; budget "
          f"{args.budget_mib} MiB; answers: " + ", ".join(f"{count} x {answer}" for answer, count in sorted(tally.items())))
    expect(after <= baseline + 48, f"RSS {after:.0f} MiB after the connections closed, from {baseline:.0f}")
    return baseline, peak, result


@attack("memory: 50 connections of one token hold uploads open; RSS stays within its quarter of the budget; another app is served; memory returns")
def _():
    baseline, peak, (status, data) = hold_50([(args.ingest_a, HOSTILE)], meanwhile=honest)
    expect(status == 200, f"the other app's upload while held: {status} {data[:200]}")
    expect(peak <= baseline + args.budget_mib / 4 + 64, f"peak {peak:.0f} MiB over {baseline:.0f} + a quarter of the budget + 64")


@attack("memory: 50 connections of five tokens hold uploads open; RSS stays within the budget; memory returns")
def _():
    others = [(token, f"net.example.other{n + 1}") for n, token in enumerate(args.others)]
    baseline, peak, _ = hold_50([(args.ingest_a, HOSTILE)] + others)
    expect(peak <= baseline + args.budget_mib + 64, f"peak {peak:.0f} MiB over {baseline:.0f} + the budget + 64")


@attack("a trickle (a byte every 2 s) and a stall are cut off with 408 in about 10 s; another app's 600-record bundle is served at once")
def _():
    body = gzip.compress(ndjson([manifest(HOSTILE)] + [event(str(uuid.uuid4())) for _ in range(2000)]), 1)
    trickles = [HeldUpload(args.ingest_a, body, hold=len(body) - 100) for _ in range(2)]
    stall = HeldUpload(args.ingest_a, body, hold=len(body) // 2)
    started = time.time()
    nid = str(uuid.uuid4())
    honest_body = ndjson([manifest(HONEST)] + [event(nid) for _ in range(600)])
    status, _, _ = upload(args.ingest_b, honest_body, "gzip")
    honest_took = time.time() - started
    cut = {}
    while time.time() - started < 30 and len(cut) < 3:
        for n, h in enumerate(trickles + [stall]):
            if n in cut:
                continue
            if n < 2 and h.offset < len(h.rest) - 1:
                try:
                    h.sock.sendall(h.rest[h.offset:h.offset + 1])
                    h.offset += 1
                except OSError:
                    pass
            answer = h.poll()
            if answer:
                cut[n] = (answer, time.time() - started)
        time.sleep(2)
    for h in trickles + [stall]:
        h.close()
    expect(status == 200 and honest_took < 5, f"the 600-record bundle: {status} in {honest_took:.1f} s")
    expect(len(cut) == 3, f"not cut off: {cut}")
    for n, (answer, when) in cut.items():
        expect(("408" in answer or answer.startswith("closed")) and when < 20, f"upload {n}: {answer} after {when:.0f} s")


@attack("a gzip bomb (1 GiB of zeros) is refused with 413 at the decompressed limit")
def _():
    compressor = gzip.compress(b"\n" * (1 << 30), 9)
    status, _, data = request("POST", "/v1/bundles", args.ingest_a, compressor,
                              {"Content-Encoding": "gzip", "Content-Type": "application/x-ndjson"})
    expect(status == 413, f"{status} {data[:200]}")


@attack("deep JSON nesting and a 1 MiB number in a record: the line rejected, the bundle stored")
def _():
    nid = str(uuid.uuid4())
    lines = [json.dumps(manifest(HOSTILE)).encode(),
             b'{"type":"event","ts":' + str(NOW_MS).encode() + b',"process":"service","event":"service.received","notification_id":"'
             + nid.encode() + b'","x":' + b"[" * 200_000 + b"]" * 200_000 + b"}",
             b'{"type":"event","ts":' + b"1" * 1_000_000 + b"}",
             json.dumps(event(nid)).encode()]
    status, _, data = upload(args.ingest_a, b"\n".join(lines) + b"\n", "gzip")
    expect(status == 200 and json.loads(data)["accepted"] >= 1, f"{status} {data[:300]}")


@attack("terminal injection: what a device logged shows escaped in logs, why, search, sql and token list; JSON stays exact")
def _():
    nid = str(uuid.uuid4())
    message = "\x1b]0;pwned\x07\x1b[2K\rOVERWRITTEN\nforged line"
    body = ndjson([manifest(HONEST, device="d-term"),
                   event(nid, category="DAILY"),
                   {"type": "log", "ts": NOW_MS, "process": "service", "level": "error\x1b[31m",
                    "notification_id": nid, "message": message}])
    status, _, data = upload(args.ingest_b, body)
    expect(status == 200 and json.loads(data)["accepted"] == 2, f"{status} {data[:300]}")
    time.sleep(3)  # the summaries follow the commit
    outputs = {
        "logs": cli("logs", "--db", args.db, nid),
        "why": cli("why", "--db", args.db, nid),
        "search": cli("search", "--db", args.db, "--app", HONEST),
        "export": cli("export", "--db", args.db, "--notification", nid),
        "token list": cli("token", "list", "--db", args.db),
    }
    for name, result in outputs.items():
        expect(result.returncode == 0, f"{name}: exit {result.returncode} {result.stderr[:300]}")
        for raw in (b"\x1b", b"\x07", b"\r"):
            expect(raw not in result.stdout, f"{name} printed a raw {raw!r}")
    expect(b"\\e]0;pwned\\u{7}\\e[2K\\rOVERWRITTEN\\nforged line" in outputs["logs"].stdout,
           f"logs: {outputs['logs'].stdout[:300]}")
    exact = cli("logs", "--db", args.db, nid, "--format", "json")
    expect(json.loads(exact.stdout)[0]["message"] == message, "logs --format json changed the message")


@attack("serve --no-auth refuses a non-loopback host; the store file is 0600; sql leaves no -wal or -shm behind")
def _():
    refused = cli("serve", "--no-auth", "--host", "0.0.0.0", "--db", os.path.join(tempfile.gettempdir(), "never.sqlite"))
    expect(refused.returncode == 2 and b"loopback" in refused.stderr, f"--no-auth: {refused.returncode} {refused.stderr[:200]}")
    mode = os.stat(args.db).st_mode & 0o777
    expect(mode == 0o600, f"the store is {oct(mode)}")
    folder = tempfile.mkdtemp()
    try:
        copy = os.path.join(folder, "copy.sqlite")
        subprocess.run(["sqlite3", args.db, ".timeout 10000", f".backup '{copy}'"], check=True)
        subprocess.run(["sqlite3", copy, "PRAGMA journal_mode=WAL"], check=True, capture_output=True)
        before = sorted(os.listdir(folder))
        result = cli("sql", "--db", copy, "SELECT count(*) FROM bundle")
        after = sorted(os.listdir(folder))
        expect(result.returncode == 0 and before == after, f"sql: {result.returncode}, {before} became {after}")
    finally:
        shutil.rmtree(folder)


@attack("malformed HTTP, a 1 MB URL and a NUL in the path: 4xx, never a crash")
def _():
    for raw in (b"GARBAGE\r\n\r\n", b"GET /" + b"a" * 1_000_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
                b"GET /v1/notifications/%00%0A HTTP/1.1\r\nHost: x\r\n\r\n"):
        sock = socket.create_connection(("127.0.0.1", args.port), timeout=10)
        try:
            sock.sendall(raw)
            answer = sock.recv(100)
        except OSError:
            answer = b"closed"
        sock.close()
        expect(answer == b"closed" or answer == b"" or answer[9:10] == b"4", f"{raw[:30]!r}: {answer[:40]!r}")


# ---------------------------------------------------------------- run

passed = failed = 0
for name, function in attacks:
    started = time.time()
    try:
        function()
        outcome = None
    except Exception as error:  # an attack's failure, whatever it was
        outcome = f"{error.__class__.__name__}: {error}"
    try:
        status, _, _ = request("GET", "/healthz", timeout=10)
        alive = status == 200
        stored, data = honest()
        if not alive or stored != 200:
            outcome = (outcome or "") + f" -- afterwards /healthz {status}, honest upload {stored} {data[:200]}"
    except Exception as error:
        outcome = (outcome or "") + f" -- afterwards the server did not answer: {error}"
    if outcome:
        failed += 1
        print(f"FAIL {name} ({time.time() - started:.1f} s)\n    {outcome}")
    else:
        passed += 1
        print(f"ok   {name} ({time.time() - started:.1f} s)")
print(f"on {args.engine}:")
print(f"attack-test: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
