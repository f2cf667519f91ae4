"""The bench's Python, in one module (scripts/bench.sh calls it; docs/PERFORMANCE.md): each command is a small
function, run as

    python3 scripts/benchlib.py COMMAND ARGS…

Times are epoch seconds as `date +%s.%N` prints them, taken by the caller around what it measures, so that
starting Python is never inside a measurement.

Commands (the arithmetic ones print one value for the shell to use):
    verdict VALUE OP TARGET      `met` or `NOT met` (OP: >= or <=)
    sub A B / rate COUNT SECONDS / ratio A B DIGITS / max A B / median VALUES… / median-over FLOOR VALUES…
    seconds START END [DIGITS]   END - START, rounded (default 0 digits)
    elapsed-ms START END         (END - START) in milliseconds
    why-over-http PORT TOKEN TARGET_MS IDS
    why-while-loading PORT TOKEN TARGET_MS CLIENTS IDS STOP
                                 `why` from CLIENTS closed-loop processes until the file STOP exists: p50/p99
    console-over-http PORT TOKEN TARGET_MS IDS APP WEEK
                                 `why` of every "app id" line of IDS on one keep-alive connection: p50/p90/p99
    get-over-http PORT TOKEN LABEL TARGET_MS PATH
                                 the median of 11 GETs of PATH (after one unmeasured)
    timed-summary LABEL TARGET_MS MS…
                                 the median of whole-process times against a target
    ingest-times FILE            `store_s diagnose_s` of `pushtrace ingest --format json`'s answer
    cli-storing-rate FILE RECORDS
                                 records per second of that answer's storing phase
    store-size DB CORPUS RECORDS the store's bytes per record beside its gzip input's, and dbstat per table
    record-rows CORPUS CONFIG_CSV
                                 the floor's rows: a CSV row per accepted record (stdout) and config rows
    ingest-summary T0 T1 T2 T3 T4 T5 RECORDS SU_ROWS STORE_S DIAGNOSE_S
                                 the ingest part's lines: pushtrace against `.import` and sqlite-utils
    load-result FILE             `rate p50 p99` of a pushtrace-load answer
    load-row LABEL FILES…        a row of the PostgreSQL part's HTTP table (the rate also into FILES[0].rate)
    latest-week DB               `app week last`: the largest app, its latest ISO week and first_ts
    middle-day DB / next-day DAY the UTC day in the middle of the store's span / the day after
    export-summary DAY LINES RATES…
    split-halves CORPUS OUT      the corpus's files, hard-linked alternately into OUT/a and OUT/b
    bytes-line BYTES RECORDS     "X MB, Y bytes per record"
    short-corpus FOLDER N   N short notifications of three records each (push.sent and APNs' answer from the backend,
                            app.will_present from the device), as bundle files under FOLDER: the corpus on which a
                            store's per-notification bytes weigh most. Seeded: the same N gives the same files.
    ab-ingest BASE NEW CORPUS PAIRS
                            `pushtrace ingest` of CORPUS into a fresh SQLite store by the binaries BASE and NEW,
                            alternated PAIRS times (the machine's speed drifts: only ratios measured side by side
                            count); prints every run (whole command, storing, diagnosing, bytes per record) and the
                            ratio of the medians.
    ab-http BASE NEW LOAD CORPUS PAIRS UPLOADERS
                            CORPUS uploaded by LOAD (pushtrace-load, arrival times replayed) with UPLOADERS at once to
                            `pushtrace serve` of BASE and of NEW, each on a fresh SQLite store, alternated PAIRS times:
                            every run's records/s and p50/p99, and the ratio of the medians.
"""
import csv, datetime, glob, gzip, http.client, json, os, random, sqlite3, statistics, subprocess, sys, tempfile, time, uuid

T0 = 1_794_000_000_000  # 2026-11-11T22:40:00Z


def short_corpus(folder, count):
    count = int(count)
    rng = random.Random(7)
    app = "net.rorklab.shortpush"
    os.makedirs(os.path.join(folder, app), exist_ok=True)
    devices = [f"d-{index:06x}" for index in range(max(1, count // 20))]
    server_days, device_lines = {}, {}
    for index in range(count):
        nid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        device = rng.choice(devices)
        ts = T0 + index * 2_000 + rng.randrange(1_000)
        day = (ts - T0) // 86_400_000
        server_days.setdefault(day, []).extend([
            {"type": "event", "ts": ts, "process": "server", "event": "push.sent", "notification_id": nid,
             "category": "DAILY_PICK", "mutable_content": False, "has_alert": True, "payload_bytes": 310,
             "device_id": device},
            {"type": "event", "ts": ts + 140, "process": "server", "event": "push.apns_response",
             "notification_id": nid, "status": 200},
        ])
        device_lines.setdefault(device, []).append(
            {"type": "event", "ts": ts + 900, "process": "app", "event": "app.will_present", "notification_id": nid})
    for day, lines in sorted(server_days.items()):
        manifest = {"type": "manifest", "schema": 1, "bundle_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                    "app_id": app, "device_id": "server", "uploaded_at": lines[-1]["ts"] + 60_000,
                    "sdk": "pushtrace-backend/1.0.0"}
        write(os.path.join(folder, app, f"server-{day:03d}.ndjson"), [manifest] + lines, gzipped=False)
    for device, lines in sorted(device_lines.items()):
        # A bundle per 20 of the device's notifications, as an app uploads when launched.
        for part in range(0, len(lines), 20):
            chunk = lines[part:part + 20]
            manifest = {"type": "manifest", "schema": 1,
                        "bundle_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "app_id": app,
                        "app_version": "3.1.0", "build": "88", "os": "iOS 26.1", "device_model": "iPhone17,1",
                        "device_id": device, "uploaded_at": chunk[-1]["ts"] + 5_000, "sdk": "pushtrace-swift/1.0.0"}
            write(os.path.join(folder, app, f"{device}-{part // 20:03d}.ndjson.gz"), [manifest] + chunk, gzipped=True)


def write(path, records, gzipped):
    text = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records).encode()
    with (gzip.open(path, "wb") if gzipped else open(path, "wb")) as out:
        out.write(text)


def _turned(pairs, base, new):
    """(pair, name, binary) of PAIRS pairs of runs, base and new, the order turned each pair: a run starts while the
    run before it is still being written back to disk."""
    for pair in range(1, int(pairs) + 1):
        order = (("base", base), ("new", new))
        for name, binary in (order if pair % 2 else order[::-1]):
            yield pair, name, binary


def ab_ingest(base, new, corpus, pairs):
    runs = {"base": [], "new": []}
    with tempfile.TemporaryDirectory() as work:
        for pair, name, binary in _turned(pairs, base, new):
            db = os.path.join(work, f"{name}.sqlite")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
            start = time.monotonic()
            out = subprocess.run([binary, "ingest", "--db", db, "--quiet", "--format", "json", corpus],
                                 check=True, capture_output=True, text=True).stdout
            whole = time.monotonic() - start
            answer = json.loads(out)
            records = answer["accepted"]
            run = {"whole": whole, "store": answer["store_ms"] / 1000, "diagnose": answer["diagnose_ms"] / 1000,
                   "bytes": sum(os.path.getsize(db + suffix) for suffix in ("", "-wal")
                                if os.path.exists(db + suffix)) / records,
                   "records": records}
            runs[name].append(run)
            print(f"  pair {pair} {name:4}: whole {whole:6.2f} s ({records / whole:8,.0f} records/s), storing "
                  f"{run['store']:6.2f} s, diagnosing {run['diagnose']:6.2f} s, {run['bytes']:6.2f} bytes/record",
                  flush=True)
    median = {name: {key: statistics.median(run[key] for run in rs) for key in ("whole", "bytes")} for name, rs in runs.items()}
    pairwise = [b["whole"] / n["whole"] for b, n in zip(runs["base"], runs["new"])]
    print(f"  rate new/base, medians: {median['base']['whole'] / median['new']['whole']:.3f} (pairs: "
          + ", ".join(f"{r:.3f}" for r in pairwise) + ")")
    print(f"  bytes per record, medians: base {median['base']['bytes']:.2f}, new {median['new']['bytes']:.2f}")


def ab_http(base, new, load, corpus, pairs, uploaders):
    runs = {"base": [], "new": []}
    with tempfile.TemporaryDirectory() as work:
        for pair, name, binary in _turned(pairs, base, new):
            db = os.path.join(work, f"{name}-{pair}.sqlite")
            token = subprocess.run([binary, "token", "create", "--db", db, "--scope", "admin"], check=True,
                                   capture_output=True, text=True).stdout.strip()
            port = _free_port()
            server = subprocess.Popen([binary, "serve", "--db", db, "--port", str(port), "--log-level", "error"])
            try:
                _wait_healthy(port)
                out = subprocess.run([load, "--server", f"http://127.0.0.1:{port}", "--concurrency", str(uploaders),
                                      "--replay", "--preload", "--format", "json", corpus],
                                     env={**os.environ, "PUSHTRACE_TOKEN": token}, check=True,
                                     capture_output=True, text=True).stdout
            finally:
                server.terminate()
                server.wait()
            answer = json.loads(out)
            rate, p50, p99 = answer["records_per_second"], answer["p50_ms"], answer["p99_ms"]
            runs[name].append(rate)
            print(f"  pair {pair} {name:4}: {rate:8,.0f} records/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms", flush=True)
    pairwise = [n / b for b, n in zip(runs["base"], runs["new"])]
    print(f"  rate new/base, medians: {statistics.median(runs['new']) / statistics.median(runs['base']):.3f} (pairs: "
          + ", ".join(f"{r:.3f}" for r in pairwise) + ")")


def _free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_healthy(port):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit(f"the server on port {port} did not start")


def verdict(value, op, target):
    value, target = float(value), float(target)
    print("met" if (value >= target if op == ">=" else value <= target) else "NOT met")


def sub(a, b):
    print(float(a) - float(b))


def rate(count, seconds):
    print(round(float(count) / float(seconds)))


def ratio(a, b, digits):
    print(f"{float(a) / float(b):.{int(digits)}f}")


def maximum(a, b):
    print(max(float(a), float(b)))


def median(*values):
    print(f"{statistics.median(map(float, values)):.3f}")


def median_over(floor, *values):
    print(f"{statistics.median(map(float, values)) / float(floor):.3f}")


def seconds(start, end, digits=0):
    print(f"{float(end) - float(start):.{int(digits)}f}")


def elapsed_ms(start, end):
    print((float(end) - float(start)) * 1000)


def why_over_http(port, token, target, ids):
    target = float(target)
    conn = http.client.HTTPConnection("127.0.0.1", int(port))
    times = []
    for line in open(ids):
        app, nid = line.split()
        start = time.perf_counter()
        conn.request("GET", f"/v1/notifications/{nid}?app={app}", headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        response.read()
        times.append((time.perf_counter() - start) * 1000)
        if response.status != 200:
            sys.exit(f"why {nid}: HTTP {response.status}")
    order = sorted(range(len(times)), key=lambda i: times[i])
    slowest = sorted(order[-10:])
    times.sort()
    p50, p90, p99 = times[len(times) // 2], times[int(len(times) * 0.9) - 1], times[int(len(times) * 0.99) - 1]
    print(f"  why over HTTP, {len(times)} random notifications: p50 {p50:.2f} ms, p90 {p90:.2f} ms, p99 {p99:.2f} ms, "
          f"max {times[-1]:.2f} ms; target p99 <= {target:g} ms: {'met' if p99 <= target else 'NOT met'}")
    print(f"    the 10 slowest were requests number {', '.join(str(i + 1) for i in slowest)}")


def _why_reader(port, token, ids, stop, out):
    """One closed-loop client of why_while_loading: `why` after `why` over its own keep-alive connection, round the
    IDs from a random start, until `stop` exists (or 20 minutes have passed); each answer's status and milliseconds
    written to `out`."""
    random.seed(os.getpid())
    deadline = time.monotonic() + 1200
    conn = http.client.HTTPConnection("127.0.0.1", int(port))
    lines = open(ids).read().split("\n")
    lines = [line.split() for line in lines if line.strip()]
    at = random.randrange(len(lines))
    with open(out, "w") as answers:
        while not os.path.exists(stop) and time.monotonic() < deadline:
            app, nid = lines[at % len(lines)]
            at += 1
            start = time.perf_counter()
            conn.request("GET", f"/v1/notifications/{nid}?app={app}", headers={"Authorization": f"Bearer {token}"})
            response = conn.getresponse()
            response.read()
            answers.write(f"{response.status} {(time.perf_counter() - start) * 1000:.3f}\n")


def why_while_loading(port, token, target, clients, ids, stop):
    """`why` from CLIENTS processes at once (pgbench-style closed loops, a keep-alive connection each) until the file
    STOP exists: p50/p99 of the answers that found their notification (200) and of those not stored yet (404)."""
    target = float(target)
    folder = tempfile.mkdtemp(prefix="why-readers.")
    readers = []
    for n in range(int(clients)):
        pid = os.fork()
        if pid == 0:
            try:
                _why_reader(port, token, ids, stop, os.path.join(folder, f"{n}.txt"))
            finally:
                os._exit(0)
        readers.append(pid)
    for pid in readers:
        os.waitpid(pid, 0)
    found, missing, other = [], [], 0
    for name in glob.glob(os.path.join(folder, "*.txt")):
        for line in open(name):
            status, ms = line.split()
            if status == "200":
                found.append(float(ms))
            elif status == "404":
                missing.append(float(ms))
            else:
                other += 1

    def quantiles(times):
        times.sort()
        return (f"p50 {times[len(times) // 2]:.2f} ms, p99 {times[max(0, int(len(times) * 0.99) - 1)]:.2f} ms, "
                f"max {times[-1]:.2f} ms") if times else "none"
    p99 = sorted(found)[max(0, int(len(found) * 0.99) - 1)] if found else float("inf")
    print(f"  why from {clients} clients during that ingest: {len(found)} found, {quantiles(found)}; "
          f"{len(missing)} not stored yet (404), {quantiles(missing)}; {other} other answers")
    print(f"  why p99 while ingesting: {p99:.2f} ms; target <= {target:g} ms: "
          f"{'met' if p99 <= target and other == 0 else 'NOT met'}")


def timed_get(conn, path, headers):
    """Milliseconds one GET of `path` took on `conn`, body read; exits unless it answered 200."""
    start = time.perf_counter()
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"{path}: HTTP {response.status}")
    return (time.perf_counter() - start) * 1000


def console_over_http(port, token, target, ids, app, week):
    """The console's pages as a signed-in browser asks for them: each kind 200 times, p50 and p99 per kind, and the
    first request apart (the report and the alerts are computed then, and kept for a minute and 10 s)."""
    target = float(target)
    conn = http.client.HTTPConnection("127.0.0.1", int(port))
    conn.request("POST", "/ui/login", body=f"token={token}", headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = conn.getresponse()
    response.read()
    cookie = (response.getheader("Set-Cookie") or "").split(";")[0]
    if response.status != 303 or not cookie:
        sys.exit(f"console sign-in: HTTP {response.status}")
    notifications = [line.split() for line in open(ids)]
    kinds = {
        "overview": lambda i: "/ui/",
        "search": lambda i: "/ui/search" + [f"?page={1 + i % 5}", "?cause=service_timeout", "?cause=coalesced_offline",
                                             f"?cause=ok&page={1 + i % 3}"][i % 4],
        "why page": lambda i: f"/ui/notifications/{notifications[i % len(notifications)][1]}?app={notifications[i % len(notifications)][0]}",
        "report page": lambda i: f"/ui/reports/weekly?app={app}&week={week}",
        "alerts page": lambda i: "/ui/alerts",
    }
    worst = 0.0
    for kind, path in kinds.items():
        timed = [timed_get(conn, path(i), {"Cookie": cookie}) for i in range(201)]
        first, times = timed[0], sorted(timed[1:])
        p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99) - 1]
        worst = max(worst, p99)
        print(f"  console {kind} over HTTP, {len(times)} requests: p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
              f"max {times[-1]:.2f} ms; the first {first:.2f} ms")
    print(f"  console pages: the worst p99 {worst:.2f} ms; target p99 <= {target:g} ms: {'met' if worst <= target else 'NOT met'}")


def get_over_http(port, token, label, target, path):
    target = float(target)
    conn = http.client.HTTPConnection("127.0.0.1", int(port))
    times = sorted([timed_get(conn, path, {"Authorization": f"Bearer {token}"}) for _ in range(12)][1:])
    middle = statistics.median(times)
    print(f"  {label} over HTTP: median {middle:.1f} ms, max {times[-1]:.1f} ms of {len(times)}; "
          f"target <= {target:g} ms: {'met' if middle <= target else 'NOT met'}")


def timed_summary(label, target, *runs):
    target, runs = float(target), sorted(map(float, runs))
    middle = statistics.median(runs)
    print(f"  {label}: median {middle:.0f} ms, max {runs[-1]:.0f} ms of {len(runs)} runs (whole process); "
          f"target <= {target:.0f} ms: {'met' if middle <= target else 'NOT met'}")


def ingest_times(path):
    answer = json.load(open(path))
    print(answer["store_ms"] / 1000, answer["diagnose_ms"] / 1000)


def cli_storing_rate(path, records):
    print(round(int(records) / (json.load(open(path))["store_ms"] / 1000)))


def store_size(path, corpus, records):
    records = int(records)
    db = sqlite3.connect(path)
    pages, size = db.execute("PRAGMA page_count").fetchone()[0], db.execute("PRAGMA page_size").fetchone()[0]
    store = pages * size + (os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0)
    upload = 0
    for name in glob.glob(os.path.join(corpus, "**", "*.ndjson*"), recursive=True):
        data = open(name, "rb").read()
        upload += len(data) if name.endswith(".gz") else len(gzip.compress(data, 6))
    print(f"== size: the store {store / 1e6:.1f} MB, {store / records:.1f} bytes per record (target <= 80: "
          f"{'met' if store / records <= 80 else 'NOT met'}); its gzip input {upload / records:.1f} bytes per record")
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        print("  by table and index (bytes per record): "
              + ", ".join(f"{n} {b / records:.1f}" for n, b in rows if b / records >= 0.5))
    except sqlite3.Error:
        pass  # a Python sqlite3 built without dbstat


def record_rows(corpus, config_csv):
    """The bench's floor: a CSV row per accepted record of the bundle files under CORPUS, in the columns of the
    per-record table the store kept before record blocks (bundle_ref, line, app_id, device_id, type, process, event,
    notification_id, ts, device_ts, body), for `sqlite3 .import` to store as that design did; CONFIG_CSV gets the
    config table's rows as that design kept them (one per app, device, process and time, the line as the body)."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    configs = csv.writer(open(config_csv, "w", encoding="utf-8"), lineterminator="\n")
    config_keys = set()
    row_id, bundle_ref = 0, 0
    for folder, _, names in sorted(os.walk(corpus)):
        for name in sorted(names):
            if ".ndjson" not in name:
                continue
            path = os.path.join(folder, name)
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as lines:
                bundle_ref += 1
                manifest = None
                for number, line in enumerate(lines, 1):
                    line = line.rstrip("\n")
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if manifest is None:
                        manifest = record
                        continue
                    if not isinstance(record, dict):
                        continue
                    row_id += 1
                    writer.writerow([row_id, bundle_ref, number, manifest.get("app_id"), manifest.get("device_id"),
                                     record.get("type"), record.get("process"), record.get("event"),
                                     record.get("notification_id"), record.get("ts"), None, line])
                    key = (manifest.get("app_id"), manifest.get("device_id"), record.get("process"), record.get("ts"))
                    if record.get("type") == "config" and None not in key and key not in config_keys:
                        config_keys.add(key)
                        configs.writerow([len(config_keys), *key, None, record.get("app_group"), line])


def ingest_summary(t0, t1, t2, t3, t4, t5, records, su_rows, store, diagnose):
    t0, t1, t2, t3, t4, t5 = map(float, (t0, t1, t2, t3, t4, t5))
    records, su_rows, store, diagnose = int(records), int(su_rows), float(store), float(diagnose)
    ingest, floor, su = t1 - t0, t3 - t2, t5 - t4
    print("== ingest (one run, same rows)")
    print(f"  pushtrace ingest, whole command:      {ingest:7.2f} s  {records / ingest:9,.0f} records/s")
    print(f"    storing (every record committed):   {store:7.2f} s  {records / store:9,.0f} records/s")
    print(f"    diagnosing every notification:      {diagnose:7.2f} s")
    print(f"  sqlite3 .import of the same rows:     {floor:7.2f} s  {records / floor:9,.0f} records/s")
    print(f"  sqlite-utils insert --nl ({su_rows:,} lines): {su:7.2f} s  {su_rows / su:9,.0f} lines/s")
    floor_ratio = floor / ingest
    print(f"  ingest / .import: {floor_ratio:.2f} (storing alone {floor / store:.2f}); target >= 1.20: "
          f"{'met' if floor_ratio >= 1.2 else 'NOT met'}")
    print(f"  ingest / sqlite-utils: {su / ingest:.1f}x as fast")


def load_result(path):
    answer = json.load(open(path))
    print(round(answer["records_per_second"]), round(answer["p50_ms"], 1), round(answer["p99_ms"], 1))


def load_row(label, *files):
    runs = [json.load(open(f)) for f in files]
    records = sum(r["records"] for r in runs)
    elapsed = max(r["seconds"] for r in runs)
    print(f"  {label:<44} {records / elapsed:12,.0f} {max(r['p50_ms'] for r in runs):9.1f} "
          f"{max(r['p99_ms'] for r in runs):9.1f}")
    print(records / elapsed, file=open(files[0] + ".rate", "w"))


def latest_week(path):
    db = sqlite3.connect(path)
    app, last = db.execute(
        "SELECT app_id, max(first_ts) FROM notification GROUP BY app_id ORDER BY count(*) DESC LIMIT 1").fetchone()
    year, week, _ = datetime.datetime.fromtimestamp(last / 1000, datetime.timezone.utc).isocalendar()
    print(app, f"{year}-W{week:02d}", last)


def middle_day(path):
    first, last = sqlite3.connect(path).execute("SELECT min(first_ts), max(first_ts) FROM notification").fetchone()
    print(datetime.datetime.fromtimestamp((first + last) / 2000, datetime.timezone.utc).date())


def next_day(day):
    print(datetime.date.fromisoformat(day) + datetime.timedelta(days=1))


def export_summary(day, lines, *rates):
    lines, rates = int(lines), sorted(map(float, rates))
    middle = statistics.median(rates)
    print(f"  export --since {day} (one day, every app, {lines:,} lines): median {middle:,.0f} lines/s of "
          f"{len(rates)} runs (whole process); target >= 100,000 lines/s: {'met' if middle >= 100_000 else 'NOT met'}")


def split_halves(corpus, out):
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs if ".ndjson" in f)
    for i, path in enumerate(files):
        target = os.path.join(out, "ab"[i % 2], os.path.relpath(path, corpus))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.link(path, target)


def proc_ticks(pid, children=False):
    """utime + stime of a live process (and, with children, of its children it has waited for), in clock ticks."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    # After the name: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    times = [int(v) for v in fields[11:15]]
    return sum(times if children else times[:2])


def cpu(*pids):
    """CPU seconds spent so far by the live processes given."""
    print(f"{sum(proc_ticks(p) for p in pids) / os.sysconf('SC_CLK_TCK'):.2f}")


def postgres_cpu(data):
    """CPU seconds PostgreSQL has spent so far: the postmaster, the backends it reaped, and every live child."""
    postmaster = int(open(os.path.join(data, "postmaster.pid")).readline())
    ticks = proc_ticks(postmaster, children=True)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                if int(stat[1]) == postmaster:
                    ticks += proc_ticks(entry, children=True)
            except (OSError, ValueError):
                pass  # gone meanwhile
    print(f"{ticks / os.sysconf('SC_CLK_TCK'):.2f}")


def per_million(seconds, records):
    print(f"{float(seconds) * 1e6 / float(records):.1f}")


def bytes_line(count, records):
    count, records = int(count), int(records)
    print(f"  {count / 1e6:,.1f} MB, {count / records:.1f} bytes per record")


COMMANDS = {
    "short-corpus": short_corpus, "ab-ingest": ab_ingest, "ab-http": ab_http, "verdict": verdict, "sub": sub, "rate": rate, "ratio": ratio,
    "max": maximum, "median": median, "median-over": median_over, "seconds": seconds, "elapsed-ms": elapsed_ms,
    "why-over-http": why_over_http, "console-over-http": console_over_http, "get-over-http": get_over_http, "timed-summary": timed_summary,
    "ingest-times": ingest_times, "cli-storing-rate": cli_storing_rate, "store-size": store_size,
    "record-rows": record_rows, "ingest-summary": ingest_summary, "load-result": load_result, "load-row": load_row,
    "latest-week": latest_week, "middle-day": middle_day, "next-day": next_day, "export-summary": export_summary,
    "split-halves": split_halves, "bytes-line": bytes_line, "cpu": cpu, "postgres-cpu": postgres_cpu,
    "why-while-loading": why_while_loading,
    "per-million": per_million,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
