"""The bench's floor: a CSV row per accepted record of the bundle files under a folder, in the columns of the
per-record table the store kept before record blocks (bundle_ref, line, app_id, device_id, type, process, event,
notification_id, ts, device_ts, body), for `sqlite3 .import` to store as that design did.

    bench-record-rows.py CORPUS CONFIG_CSV > record.csv

CONFIG_CSV gets the config table's rows as that design kept them (one per app, device, process and time, the
line itself as the body)."""
import csv, gzip, json, os, sys

writer = csv.writer(sys.stdout, lineterminator="\n")
configs = csv.writer(open(sys.argv[2], "w", encoding="utf-8"), lineterminator="\n")
config_keys = set()
row_id, bundle_ref = 0, 0
for folder, _, names in sorted(os.walk(sys.argv[1])):
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
