#!/usr/bin/env python3
"""Merges chunk stores, each built by `pushtrace ingest`, into one large store (docs/PERFORMANCE.md, the scale store).

    scripts/merge-stores.py TARGET CHUNK_FOLDER CHUNKS

TARGET must already hold pushtrace's schema (any pushtrace command that opens it migrates it). Chunk i is
CHUNK_FOLDER/chunk-i.sqlite, merged once CHUNK_FOLDER/chunk-i.sqlite.ready exists, and deleted after; the chunks
are merged in order, as they come. Every row is copied as pushtrace stored it: bundle, record-block, config-body
and rejected-line ids are shifted past the target's (and the index of a notification's blocks with them), each
chunk's dictionaries (one per app) are copied unless their Adler-32 is in the target already (blocks name theirs by its Adler-32), devices keep their earliest first
and latest last sighting, and the rollups are summed (a chunk's notifications are all settled, as `pushtrace
ingest` leaves them).

Why not ingest every chunk into the one store: past a few GB, each insert into the random-keyed indexes is a page
read and a page write of its own on this machine, and ten chunks of 1,000,000 notifications would take over four
hours. Here everything stays in a large page cache, eight chunks to a transaction (no journal: an interrupted
merge is started again from nothing).
"""
import os
import sqlite3
import sys
import time

ID_SHIFTS = {  # table: {column holding an id: the table whose largest id shifts it}
    "client": {"id": "client"},
    "bundle": {"id": "bundle", "first_block": "record_block", "last_block": "record_block", "client_ref": "client"},
    "record_block": {"id": "record_block", "bundle_ref": "bundle"},
    "config_body": {"id": "config_body"},
    "rejected_line": {"id": "rejected_line", "bundle_ref": "bundle"},
}
ROLLUPS = ["daily", "hourly", "daily_duration", "daily_action", "minutely"]
PLAIN = ["notification"]
GROUP = 8


def columns(db, table):
    return [(row[1], row[5]) for row in db.execute(f"SELECT * FROM pragma_table_info('{table}')")]


def merge_chunk(db, c):
    """Copies every row of the attached chunk store `c` into the main store (inside the caller's transaction)."""
    shift = {t: db.execute(f"SELECT coalesce(max(id), 0) FROM main.{t}").fetchone()[0] for t in ID_SHIFTS}
    db.execute(f"INSERT OR IGNORE INTO main.dictionary (adler32, trained_at, bytes, app_id) "
               f"SELECT adler32, trained_at, bytes, app_id FROM {c}.dictionary ORDER BY id")
    # A block's dictionary, by the target's row id of the same dictionary (0: none).
    remap = {"dictionary": f"coalesce((SELECT m.id FROM main.dictionary m JOIN {c}.dictionary d USING (adler32) "
                           f"WHERE d.id = dictionary), 0)"}
    for table, shifted in ID_SHIFTS.items():
        names = [name for name, _ in columns(db, table)]
        select = ", ".join(f"{n} + {shift[shifted[n]]}" if n in shifted else remap.get(n, n) if table == "record_block" else n
                           for n in names)
        db.execute(f"INSERT INTO main.{table} ({', '.join(names)}) SELECT {select} FROM {c}.{table}")
    # Configs are unique by (app, device, process, ts): a device ID drawn by two chunks keeps the first's.
    db.execute(f"INSERT OR IGNORE INTO main.config (app_id, device_id, process, ts, device_ts, body_ref) "
               f"SELECT app_id, device_id, process, ts, device_ts, body_ref + {shift['config_body']} FROM {c}.config")
    for table in PLAIN:
        db.execute(f"INSERT INTO main.{table} SELECT * FROM {c}.{table}")
    db.execute(f"INSERT INTO main.notification_block (key, block) "
               f"SELECT key, block + {shift['record_block']} FROM {c}.notification_block")
    db.execute(f"""
        INSERT INTO main.device SELECT * FROM {c}.device WHERE true
        ON CONFLICT (app_id, device_id) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen),
            last_seen = max(last_seen, excluded.last_seen)""")
    for table in ROLLUPS:
        cols = columns(db, table)
        keys = [name for name, pk in cols if pk]
        sums = [f"{n} = {n} + excluded.{n}" if n != "example_id" else "example_id = excluded.example_id"
                for n, pk in cols if not pk]
        db.execute(f"INSERT INTO main.{table} SELECT * FROM {c}.{table} WHERE true "
                   f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {', '.join(sums)}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1].strip())
    target, folder, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    db = sqlite3.connect(target, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -10000000")  # 10 GB: every random-keyed table and index stays in memory
    started = time.time()
    # A commit writes every page the transaction dirtied, most of the random-keyed tables: so a transaction takes
    # as many chunks as can be attached at once (SQLite's limit is 10).
    for first in range(0, chunks, GROUP):
        group = range(first, min(first + GROUP, chunks))
        paths = [os.path.join(folder, f"chunk-{i}.sqlite") for i in group]
        for path in paths:
            while not os.path.exists(path + ".ready"):
                time.sleep(1)
        t0 = time.time()
        for n, path in enumerate(paths):
            db.execute(f"ATTACH DATABASE ? AS c{n}", (path,))
        db.execute("BEGIN")
        for n in range(len(paths)):
            merge_chunk(db, f"c{n}")
        db.execute("COMMIT")
        for n, path in enumerate(paths):
            db.execute(f"DETACH DATABASE c{n}")
            for suffix in ("", "-wal", "-shm", "-summaries", ".ready"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
        print(f"  merged chunks {group.start + 1}-{group.stop} of {chunks} in {time.time() - t0:.0f} s; "
              f"{time.time() - started:.0f} s so far", flush=True)
    db.execute("PRAGMA journal_mode = WAL")
    db.close()


if __name__ == "__main__":
    main()
