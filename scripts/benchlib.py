"""The bench's Python, in one module: each command is a small function, run as

    python3 scripts/benchlib.py COMMAND ARGS…

Commands:
    short-corpus FOLDER N   N short notifications of three records each (push.sent and APNs' answer from the backend,
                            app.will_present from the device), as bundle files under FOLDER: the corpus on which a
                            store's per-notification bytes weigh most. Seeded: the same N gives the same files.
    ab-ingest BASE NEW CORPUS PAIRS
                            `pushtrace ingest` of CORPUS into a fresh SQLite store by the binaries BASE and NEW,
                            alternated PAIRS times (the machine's speed drifts: only ratios measured side by side
                            count); prints every run (whole command, storing, diagnosing, bytes per record) and the
                            ratio of the medians.
"""
import gzip, json, os, random, statistics, subprocess, sys, tempfile, time, uuid

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


def ab_ingest(base, new, corpus, pairs):
    runs = {"base": [], "new": []}
    with tempfile.TemporaryDirectory() as work:
        for pair in range(1, int(pairs) + 1):
            for name, binary in (("base", base), ("new", new)):
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
                       "bytes": os.path.getsize(db) / records, "records": records}
                runs[name].append(run)
                print(f"  pair {pair} {name:4}: whole {whole:6.2f} s ({records / whole:8,.0f} records/s), storing "
                      f"{run['store']:6.2f} s, diagnosing {run['diagnose']:6.2f} s, {run['bytes']:6.2f} bytes/record",
                      flush=True)
    median = {name: {key: statistics.median(run[key] for run in rs) for key in ("whole", "bytes")} for name, rs in runs.items()}
    pairwise = [b["whole"] / n["whole"] for b, n in zip(runs["base"], runs["new"])]
    print(f"  rate new/base, medians: {median['base']['whole'] / median['new']['whole']:.3f} (pairs: "
          + ", ".join(f"{r:.3f}" for r in pairwise) + ")")
    print(f"  bytes per record, medians: base {median['base']['bytes']:.2f}, new {median['new']['bytes']:.2f}")


COMMANDS = {"short-corpus": short_corpus, "ab-ingest": ab_ingest}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
