import GRDB
import PushTraceStore

/// The database schema, as named, ordered migrations. `docs/schema.md` describes every table for `pushtrace sql`.
enum Schema {
    /// Migrations an earlier build ran and this one took back (``WithdrawnMigration``), undone when a store that
    /// ran them is opened. Append-only, as the migrations are.
    static let withdrawn: [WithdrawnMigration] = [
        // Released as the 15th migration, then dropped for the first block of each bundle: retention no longer
        // finds a superseded dictionary's blocks by index, and no insert should keep one up to date.
        WithdrawnMigration(name: "v15-dictionary-use", undo: ["DROP INDEX IF EXISTS record_block_by_dictionary"])
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-bundles-records-summaries") { db in
            try db.execute(
                sql: """
                    CREATE TABLE bundle (
                        id INTEGER PRIMARY KEY,
                        app_id TEXT NOT NULL,
                        bundle_id TEXT NOT NULL,
                        device_id TEXT,
                        app_version TEXT,
                        build TEXT,
                        os TEXT,
                        device_model TEXT,
                        sdk TEXT,
                        uploaded_at INTEGER,
                        received_at INTEGER NOT NULL,
                        clock_offset_ms INTEGER NOT NULL,
                        source TEXT,
                        accepted INTEGER NOT NULL DEFAULT 0,
                        rejected INTEGER NOT NULL DEFAULT 0,
                        UNIQUE (app_id, bundle_id)
                    );
                    CREATE TABLE record (
                        id INTEGER PRIMARY KEY,
                        bundle_ref INTEGER NOT NULL REFERENCES bundle(id),
                        line INTEGER NOT NULL,
                        app_id TEXT NOT NULL,
                        device_id TEXT,
                        type TEXT NOT NULL,
                        process TEXT,
                        event TEXT,
                        notification_id TEXT,
                        ts INTEGER,
                        device_ts INTEGER,
                        body TEXT NOT NULL
                    );
                    CREATE INDEX record_by_notification ON record(app_id, notification_id, ts)
                        WHERE notification_id IS NOT NULL;
                    CREATE TABLE rejected_line (
                        id INTEGER PRIMARY KEY,
                        bundle_ref INTEGER NOT NULL REFERENCES bundle(id),
                        line INTEGER NOT NULL,
                        reason TEXT NOT NULL,
                        raw BLOB NOT NULL
                    );
                    CREATE TABLE config (
                        id INTEGER PRIMARY KEY,
                        app_id TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        process TEXT NOT NULL,
                        ts INTEGER NOT NULL,
                        device_ts INTEGER,
                        app_group TEXT,
                        body TEXT NOT NULL,
                        UNIQUE (app_id, device_id, process, ts)
                    );
                    CREATE TABLE device (
                        app_id TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL,
                        app_version TEXT,
                        os TEXT,
                        device_model TEXT,
                        PRIMARY KEY (app_id, device_id)
                    ) WITHOUT ROWID;
                    CREATE TABLE notification (
                        app_id TEXT NOT NULL,
                        notification_id TEXT NOT NULL,
                        device_id TEXT,
                        category TEXT,
                        app_version TEXT,
                        os TEXT,
                        first_ts INTEGER,
                        last_ts INTEGER,
                        sent_ts INTEGER,
                        apns_status INTEGER,
                        has_alert INTEGER,
                        mutable_content INTEGER,
                        service_received INTEGER NOT NULL DEFAULT 0,
                        service_delivered INTEGER NOT NULL DEFAULT 0,
                        service_expired INTEGER NOT NULL DEFAULT 0,
                        service_ms INTEGER,
                        service_crashed INTEGER NOT NULL DEFAULT 0,
                        content_received INTEGER NOT NULL DEFAULT 0,
                        content_crashed INTEGER NOT NULL DEFAULT 0,
                        actions INTEGER NOT NULL DEFAULT 0,
                        app_responses INTEGER NOT NULL DEFAULT 0,
                        records INTEGER NOT NULL DEFAULT 0,
                        cause TEXT,
                        PRIMARY KEY (app_id, notification_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX notification_by_time ON notification(app_id, first_ts);
                    CREATE INDEX notification_unsettled ON notification(app_id) WHERE cause IS NULL;
                    CREATE INDEX notification_awaiting ON notification(app_id, device_id)
                        WHERE cause = 'awaiting_device_logs';
                    """)
        }
        migrator.registerMigration("v2-tokens") { db in
            // Only a SHA-256 of each token's secret is kept; the token itself is shown once, at creation.
            try db.execute(
                sql: """
                    CREATE TABLE token (
                        id TEXT PRIMARY KEY,
                        app_id TEXT,
                        scope TEXT NOT NULL CHECK (scope IN ('ingest', 'read', 'admin')),
                        secret_sha256 BLOB NOT NULL,
                        label TEXT,
                        created_at INTEGER NOT NULL,
                        revoked_at INTEGER,
                        CHECK (app_id IS NOT NULL OR scope = 'admin')
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v3-rollups") { db in
            // What the reports need per notification beyond v1's summary, derived from the stored records.
            try db.execute(
                sql: """
                    ALTER TABLE notification ADD COLUMN device_reached INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE notification ADD COLUMN downloads INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE notification ADD COLUMN download_bytes INTEGER;
                    ALTER TABLE notification ADD COLUMN attachment_failure TEXT;
                    CREATE TABLE notification_action (
                        app_id TEXT NOT NULL,
                        notification_id TEXT NOT NULL,
                        ts INTEGER,
                        action TEXT,
                        response TEXT
                    );
                    CREATE INDEX notification_action_by_notification ON notification_action(app_id, notification_id);
                    UPDATE notification AS n SET
                        device_reached = EXISTS (SELECT 1 FROM record r WHERE r.app_id = n.app_id
                            AND r.notification_id = n.notification_id AND r.device_id IS NOT NULL),
                        downloads = (SELECT count(*) FROM record r WHERE r.app_id = n.app_id
                            AND r.notification_id = n.notification_id AND r.event = 'service.download'),
                        download_bytes = (SELECT sum(json_extract(r.body, '$.bytes')) FROM record r WHERE r.app_id = n.app_id
                            AND r.notification_id = n.notification_id AND r.event = 'service.download'),
                        attachment_failure = (SELECT \(FrozenRollupSQL.v3AttachmentFailure) FROM record r WHERE r.app_id = n.app_id
                            AND r.notification_id = n.notification_id AND r.event IN ('service.download', 'service.attachment')
                            AND \(FrozenRollupSQL.v3AttachmentFailure) IS NOT NULL ORDER BY r.ts, r.id LIMIT 1);
                    INSERT INTO notification_action (app_id, notification_id, ts, action, response)
                        SELECT app_id, notification_id, ts, json_extract(body, '$.action'), json_extract(body, '$.response')
                        FROM record WHERE event = 'content.action' AND notification_id IS NOT NULL ORDER BY id;
                    """)
            // It also created triggers that kept the rollups current, until `v10-rollups-in-swift` dropped them; a
            // store migrated now goes on to v10 at once, so they are no longer created only to be dropped.
            try db.execute(sql: FrozenRollupSQL.v3Tables)
        }
        migrator.registerMigration("v4-minutely") { db in
            // The alerts' last hour from ~60 rollup rows per category instead of every notification in it.
            try db.execute(sql: FrozenRollupSQL.v4Minutely)
        }
        migrator.registerMigration("v5-retention") { db in
            // Each bundle's records are one contiguous id range (one writer inserts them in a row): retention deletes
            // a bundle's records by that range, without an index on record.bundle_ref that every insert would pay for.
            try db.execute(
                sql: """
                    ALTER TABLE bundle ADD COLUMN first_record INTEGER;
                    ALTER TABLE bundle ADD COLUMN last_record INTEGER;
                    ALTER TABLE bundle ADD COLUMN pruned_at INTEGER;
                    UPDATE bundle SET first_record = r.lo, last_record = r.hi
                        FROM (SELECT bundle_ref, min(id) AS lo, max(id) AS hi FROM record GROUP BY bundle_ref) AS r
                        WHERE r.bundle_ref = bundle.id;
                    CREATE INDEX bundle_by_received ON bundle(received_at) WHERE pruned_at IS NULL;
                    CREATE INDEX rejected_line_by_bundle ON rejected_line(bundle_ref);
                    """)
        }
        migrator.registerMigration("v6-rollup-triggers-without-sorter") { _ in
            // It recreated the rollup triggers without an aggregate; `v10-rollups-in-swift` drops them.
        }
        migrator.registerMigration("v7-deferred-summaries") { db in
            // A server writes the summaries of its bundles a second or two after committing them (`SummaryBacklog`);
            // the bundles it had not summarized when it stopped are found by this flag and summarized at start-up.
            try db.execute(
                sql: """
                    ALTER TABLE bundle ADD COLUMN summarized INTEGER NOT NULL DEFAULT 1;
                    CREATE INDEX bundle_unsummarized ON bundle(id) WHERE summarized = 0;
                    """)
        }
        migrator.registerMigration("v8-metrics-scope") { db in
            // A `metrics` token reads /metrics' series by app, and nothing else; like an admin token it has no app.
            // SQLite cannot change a CHECK constraint in place, so the table is copied into its new definition.
            try db.execute(
                sql: """
                    CREATE TABLE token_v8 (
                        id TEXT PRIMARY KEY,
                        app_id TEXT,
                        scope TEXT NOT NULL CHECK (scope IN ('ingest', 'read', 'admin', 'metrics')),
                        secret_sha256 BLOB NOT NULL,
                        label TEXT,
                        created_at INTEGER NOT NULL,
                        revoked_at INTEGER,
                        CHECK (app_id IS NOT NULL OR scope IN ('admin', 'metrics'))
                    ) WITHOUT ROWID;
                    INSERT INTO token_v8 (id, app_id, scope, secret_sha256, label, created_at, revoked_at)
                        SELECT id, app_id, scope, secret_sha256, label, created_at, revoked_at FROM token;
                    DROP TABLE token;
                    ALTER TABLE token_v8 RENAME TO token;
                    """)
        }
        migrator.registerMigration("v9-record-blocks") { db in
            // Accepted lines kept as received, compressed a few hundred at a time (`RecordBlock`), instead of a row
            // each; `notification_block` finds a notification's blocks. Existing `record` rows are moved into blocks
            // after the migrations, a bounded batch per transaction (`SQLiteStore.convertRecordsToBlocks`).
            try db.execute(
                sql: """
                    CREATE TABLE dictionary (
                        id INTEGER PRIMARY KEY,
                        adler32 INTEGER NOT NULL UNIQUE,
                        trained_at INTEGER NOT NULL,
                        bytes BLOB NOT NULL
                    );
                    CREATE TABLE record_block (
                        id INTEGER PRIMARY KEY,
                        bundle_ref INTEGER NOT NULL REFERENCES bundle(id),
                        lines INTEGER NOT NULL,
                        raw_bytes INTEGER NOT NULL,
                        dictionary INTEGER NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE TABLE notification_block (
                        key INTEGER NOT NULL,
                        block INTEGER NOT NULL,
                        PRIMARY KEY (key, block)
                    ) WITHOUT ROWID;
                    ALTER TABLE bundle ADD COLUMN first_block INTEGER;
                    ALTER TABLE bundle ADD COLUMN last_block INTEGER;
                    CREATE INDEX bundle_unconverted ON bundle(id) WHERE first_record IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v10-rollups-in-swift") { db in
            // Settling and unsettling now add and take away each notification's rollup counts in Swift
            // (`Rollup.contributions`, written by `RollupDeltas`), the one definition of them.
            try db.execute(sql: "DROP TRIGGER IF EXISTS rollup_add; DROP TRIGGER IF EXISTS rollup_remove")
        }
        migrator.registerMigration("v11-config-bodies-and-action-lists", foreignKeyChecks: .immediate) { db in
            // Every bundle of a device repeats its config records: their bodies are kept once each (`config_body`,
            // found again by the digest of the line), and a config row is its key, its times and a reference. The
            // rows a store holds move over one body each, in one pass (no sort of every body); retention deletes the
            // superseded ones. A notification's actions, read only for the action rollup, become a JSON list in its
            // summary instead of a table and an index of their own (their lines, times included, stay in the record
            // blocks). `body_ref` is not declared a foreign key: retention deletes unreferenced bodies in one
            // statement, which a per-row check of an unindexed reference would make quadratic.
            try db.execute(
                sql: """
                    CREATE TABLE config_body (
                        id INTEGER PRIMARY KEY,
                        digest INTEGER,
                        app_group TEXT,
                        body BLOB NOT NULL
                    );
                    INSERT INTO config_body (id, app_group, body) SELECT id, app_group, body FROM config;
                    CREATE INDEX config_body_by_digest ON config_body(digest) WHERE digest IS NOT NULL;
                    CREATE TABLE config_v11 (
                        app_id TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        process TEXT NOT NULL,
                        ts INTEGER NOT NULL,
                        device_ts INTEGER,
                        body_ref INTEGER NOT NULL,
                        PRIMARY KEY (app_id, device_id, process, ts)
                    ) WITHOUT ROWID;
                    INSERT INTO config_v11 (app_id, device_id, process, ts, device_ts, body_ref)
                        SELECT app_id, device_id, process, ts, device_ts, id FROM config ORDER BY app_id, device_id, process, ts;
                    DROP TABLE config;
                    ALTER TABLE config_v11 RENAME TO config;
                    ALTER TABLE notification ADD COLUMN action_list TEXT;
                    UPDATE notification SET action_list = (
                        SELECT json_group_array(json_array(action, response)) FROM (
                            SELECT action, response FROM notification_action a
                            WHERE a.app_id = notification.app_id AND a.notification_id = notification.notification_id
                            ORDER BY a.rowid))
                        WHERE actions > 0;
                    DROP TABLE notification_action;
                    """)
        }
        migrator.registerMigration("v12-dictionaries-per-app", foreignKeyChecks: .immediate) { db in
            // Each app's blocks are compressed against a dictionary trained on its own lines; the store's shared
            // dictionary (app_id NULL), if it has one, stays for the blocks that name it and for apps not trained yet.
            try db.execute(
                sql: """
                    ALTER TABLE dictionary ADD COLUMN app_id TEXT;
                    CREATE INDEX dictionary_by_app ON dictionary(app_id, id);
                    """)
        }
        migrator.registerMigration("v13-clients", foreignKeyChecks: .immediate) { db in
            // What a bundle's manifest says of the software and hardware that sent it (app version, build, OS,
            // device model, SDK) is the same for every bundle a device sends until it updates: kept once per
            // combination (`client`), which each bundle refers to.
            try db.execute(
                sql: """
                    CREATE TABLE client (
                        id INTEGER PRIMARY KEY,
                        app_version TEXT,
                        build TEXT,
                        os TEXT,
                        device_model TEXT,
                        sdk TEXT
                    );
                    INSERT INTO client (app_version, build, os, device_model, sdk)
                        SELECT DISTINCT app_version, build, os, device_model, sdk FROM bundle;
                    CREATE INDEX client_by_description ON client(app_version, build, os, device_model, sdk);
                    ALTER TABLE bundle ADD COLUMN client_ref INTEGER REFERENCES client(id);
                    UPDATE bundle SET client_ref = (
                        SELECT id FROM client c WHERE c.app_version IS bundle.app_version AND c.build IS bundle.build
                        AND c.os IS bundle.os AND c.device_model IS bundle.device_model AND c.sdk IS bundle.sdk);
                    ALTER TABLE bundle DROP COLUMN app_version;
                    ALTER TABLE bundle DROP COLUMN build;
                    ALTER TABLE bundle DROP COLUMN os;
                    ALTER TABLE bundle DROP COLUMN device_model;
                    ALTER TABLE bundle DROP COLUMN sdk;
                    """)
        }
        migrator.registerMigration("v14-bundle-time-spans") { db in
            // The corrected times a bundle's lines span, in whole hours from its received time, so that a
            // time-filtered export decodes only the blocks of bundles whose span meets the range. Config lines have
            // a span of their own (`config_ts_to` NULL when it is one hour): every bundle repeats its device's
            // config, recorded long before, which would otherwise stretch each span back to it. NULL everywhere
            // (bundles stored before, or without a timed line): read whole.
            try db.execute(
                sql: """
                    ALTER TABLE bundle ADD COLUMN ts_from INTEGER;
                    ALTER TABLE bundle ADD COLUMN ts_to INTEGER;
                    ALTER TABLE bundle ADD COLUMN config_ts_from INTEGER;
                    ALTER TABLE bundle ADD COLUMN config_ts_to INTEGER;
                    """)
        }
        migrator.registerMigration("v15-cause-flags") { db in
            // What settling decides a notification's cause from besides its summary (`CauseFlags`). A summary
            // stored before has 2048, the flag that sends it to its records, as settling read them before.
            try db.execute(sql: "ALTER TABLE notification ADD COLUMN cause_flags INTEGER DEFAULT 2048")
        }
        migrator.registerMigration("v16-notifications-by-device") { db in
            // APNs's delivery rules read a device's later notifications (a push kept instead, one that replaced it).
            try db.execute(
                sql: "CREATE INDEX notification_by_device ON notification(app_id, device_id, sent_ts) WHERE device_reached = 1")
        }
        migrator.registerMigration("v17-settings-summaries") { db in
            // The audience counts devices by their latest notification settings: a config record keeps what it
            // counts of them (`SettingsSummary`), 0 when it carries none, and a device the summary of its latest
            // app config record that carries them, with the time since which every such record has had it
            // (`settings_since`), and the same before that (`previous_…`), so that most devices are counted without
            // reading their config records. Rows stored before have NULL: config bodies, and the devices' config
            // records, are read instead.
            try db.execute(sql: "ALTER TABLE config ADD COLUMN settings INTEGER")
            for column in ["settings", "settings_since", "previous_settings", "previous_since"] {
                try db.execute(sql: "ALTER TABLE device ADD COLUMN \(column) INTEGER")
            }
            // The audience counts an app's active devices by summary from this index alone, in its order.
            try db.execute(
                sql: """
                    CREATE INDEX device_settings ON device(
                        app_id, settings, previous_settings, last_seen, first_seen, settings_since, previous_since)
                    """)
            // A device's pushes settled not_delivered, settled again when a later one reaches it: APNs may have
            // kept that one instead (coalesced_offline).
            try db.execute(
                sql: "CREATE INDEX notification_undelivered ON notification(app_id, device_id, sent_ts) WHERE cause = 'not_delivered'")
        }
        migrator.registerMigration("v18-notifications-by-cause") { db in
            // A search by cause other than the two a shown card settles (most rows) finds its rows here, however
            // few and far apart; those two are found through the time index, where any stretch holds many.
            try db.execute(
                sql: """
                    CREATE INDEX notification_by_cause ON notification(app_id, cause, first_ts)
                        WHERE cause NOT IN ('not_expanded', 'ok')
                    """)
        }
        return migrator
    }
}

extension BundleLayout {
    /// SQLite keeps the range of a bundle's blocks and its client's row on the bundle row.
    static let sqlite = BundleLayout(
        firstBlock: "u.first_block", blocksOfBundle: "b.id BETWEEN u.first_block AND u.last_block AND b.bundle_ref = u.id",
        client: "c.app_version, c.build, c.os, c.device_model, c.sdk", clientJoin: " LEFT JOIN client c ON c.id = u.client_ref",
        summarized: "u.summarized", prunedBlocks: ", first_block = NULL, last_block = NULL")
}
