import PostgresNIO
import PushTraceStore

/// The database schema, as named, ordered migrations recorded in `pushtrace_migration`. A migration never changes
/// once released: a new one follows it. `docs/schema.md` describes the tables; they hold what the SQLite engine's
/// do, so that `pushtrace sql` reads the same columns on both.
enum PostgresSchema {
    /// Every migration this build knows, in the order they run.
    static let migrations: [(name: String, sql: String)] = [
        ("v1-blocks-summaries-rollups-tokens", v1),
        ("v2-cause-flags", v2),
        ("v3-notifications-by-device", v3),
        ("v4-settings-summaries", v4),
        ("v5-select-only-reader", v5),
        ("v6-leases", v6),
        ("v7-notifications-by-cause", v7),
    ]

    /// Migrations an earlier build ran and this one took back (``WithdrawnMigration``), undone when a database that
    /// ran them is opened. Append-only, as the migrations are.
    static let withdrawn: [WithdrawnMigration] = [
        // Released as the second migration, then dropped: every insert of a block kept it up to date, for retention's
        // look-up of a superseded dictionary's blocks, which stops at the first block naming it (the oldest) and
        // reads the table once when none does, before the dictionary is emptied.
        WithdrawnMigration(name: "v2-dictionary-use", undo: ["DROP INDEX IF EXISTS record_block_by_dictionary"])
    ]

    /// The advisory lock key servers starting at once take while they migrate, so that one migrates and the
    /// others then find it done.
    static let migrationLock: Int64 = 0x7075_7368_7472_0001

    /// Applies the migrations the database lacks, in one transaction under ``migrationLock``, after undoing those this
    /// build withdrew (``withdrawn``); refuses a database a newer pushtrace migrated (migrations this build does not
    /// know) and a database of another program. A database already up to date is found so with one statement,
    /// without the lock.
    static func migrate(_ session: PostgresSession, location: String) throws {
        // Every command opens the store, and the database is nearly always up to date. The table counts only in the
        // schema the locked path checks (`current_schema()`), not elsewhere on the search path. A database without
        // the table answers undefined_table (PostgreSQL logs it once, on a new database) and takes the locked path,
        // as does any other answer than this build's migrations.
        let known = Set(migrations.map(\.name))
        do {
            let applied = try session.query(
                """
                SELECT name FROM pushtrace_migration
                WHERE to_regclass('pushtrace_migration') = to_regclass(quote_ident(current_schema()) || '.pushtrace_migration')
                """
            ).map { try $0.decode(String.self) }
            if Set(applied) == known { return }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {  // undefined_table
        }
        try session.transaction {
            try session.query("SELECT pg_advisory_xact_lock(\(migrationLock))")
            let tables = try session.query(
                """
                SELECT table_name::text FROM information_schema.tables
                WHERE table_schema = current_schema() ORDER BY table_name
                """
            ).map { try $0.decode(String.self) }
            if !tables.isEmpty && !tables.contains("pushtrace_migration") {
                throw StoreError.otherDatabase(location, tables: tables)
            }
            try session.query(
                """
                CREATE TABLE IF NOT EXISTS pushtrace_migration (
                    name text PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let applied = Set(try session.query("SELECT name FROM pushtrace_migration").map { try $0.decode(String.self) })
            let undone = withdrawn.filter { applied.contains($0.name) }
            let unknown = applied.subtracting(known).subtracting(undone.map(\.name)).sorted()
            if !unknown.isEmpty { throw StoreError.newerSchema(location, migrations: unknown) }
            for migration in undone {
                for statement in migration.undo { try session.query(PostgresQuery(unsafeSQL: statement)) }
                try session.query("DELETE FROM pushtrace_migration WHERE name = \(migration.name)")
            }
            for migration in migrations where !applied.contains(migration.name) {
                // One statement at a time: the extended protocol takes one per query.
                for statement in migration.sql.components(separatedBy: ";\n") where !statement.allSatisfy(\.isWhitespace) {
                    try session.query(PostgresQuery(unsafeSQL: statement))
                }
                try session.query("INSERT INTO pushtrace_migration (name) VALUES (\(migration.name))")
            }
        }
    }

    /// What settling decides a notification's cause from besides its summary (`CauseFlags`), as SQLite's
    /// `v15-cause-flags`. A summary stored before has 2048, the flag that sends it to its records; a row created
    /// empty to merge facts into has NULL, no flags.
    private static let v2 = """
        ALTER TABLE notification ADD COLUMN cause_flags bigint DEFAULT 2048;
        ALTER TABLE notification ALTER COLUMN cause_flags DROP DEFAULT
        """

    /// APNs's delivery rules read a device's later notifications (a push kept instead, one that replaced it).
    private static let v3 = """
        CREATE INDEX notification_by_device ON notification (app_id, device_id, sent_ts) WHERE device_reached = 1
        """

    /// What the audience counts of notification settings (`SettingsSummary`), as SQLite's `v17-settings-summaries`:
    /// a config record's, 0 when it carries none; a device's latest and since when it has held, and the same before
    /// that. NULL on rows stored before, which are read the long way instead. The index the audience counts devices
    /// from, and the index of the pushes settled `not_delivered` by device, settled again when a later one reaches it.
    private static let v4 = """
        ALTER TABLE config ADD COLUMN settings bigint;
        ALTER TABLE device ADD COLUMN settings bigint, ADD COLUMN settings_since bigint,
            ADD COLUMN previous_settings bigint, ADD COLUMN previous_since bigint;
        CREATE INDEX device_settings ON device (
            app_id, settings, previous_settings, last_seen, first_seen, settings_since, previous_since);
        CREATE INDEX notification_undelivered ON notification (app_id, device_id, sent_ts) WHERE cause = 'not_delivered'
        """

    /// `pushtrace sql` runs as `DATABASE_reader`, a role without login that may only read this schema's tables (now
    /// and later ones), and that the store's owner may switch to. An owner without CREATEROLE cannot make it, and a
    /// name past PostgreSQL's 63 bytes cannot be made: the migration goes on without it, and `sql` refuses until an
    /// administrator makes it (docs/deploy.md). A role of that name that can log in, holds any privilege of its own
    /// or is granted to another role (who could then read this database through it) is never adopted: the
    /// migration fails, naming it. One line: the migration runner splits statements at a
    /// semicolon that ends a line.
    private static let v5 = """
        DO $$ DECLARE reader text := current_database() || '_reader'; BEGIN \
        IF octet_length(reader) > 63 THEN RAISE NOTICE 'pushtrace: the role name % is too long', reader; RETURN; END IF; \
        IF EXISTS (SELECT FROM pg_roles r WHERE r.rolname = reader AND (r.rolcanlogin OR r.rolsuper OR r.rolcreaterole \
        OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls OR EXISTS (SELECT FROM pg_auth_members m WHERE m.member = r.oid) \
        OR EXISTS (SELECT FROM pg_auth_members m WHERE m.roleid = r.oid AND m.member <> (SELECT oid FROM pg_roles WHERE rolname = current_user)))) \
        THEN RAISE EXCEPTION 'pushtrace: the role % exists and can log in, holds privileges of its own or is granted to other roles; pushtrace sql will not run as it: rename or drop it', reader; END IF; \
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = reader) THEN EXECUTE format('CREATE ROLE %I NOLOGIN', reader); END IF; \
        EXECUTE format('GRANT %I TO %I', reader, current_user); \
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', current_schema(), reader); \
        EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO %I', current_schema(), reader); \
        EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT ON TABLES TO %I', current_schema(), reader); \
        EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'pushtrace: the role % cannot be made: %', reader, SQLERRM; \
        END $$
        """

    /// Who leads a shared task (the alert monitor, a retention pass) and until when (``PostgresLeadership``): a row
    /// rather than a session's advisory lock, which a pooler in transaction mode would lend to other clients with the
    /// connection, or lose between two statements. Updated in place at each renewal.
    private static let v6 = """
        CREATE TABLE lease (
            task text COLLATE "C" PRIMARY KEY,
            holder text COLLATE "C" NOT NULL,
            expires_at timestamptz NOT NULL
        ) WITH (fillfactor = 50)
        """

    /// The data model of SQLite's 14 migrations, in one: bundles, record blocks and their index, rejected lines,
    /// config records, devices, per-notification summaries, tokens and the rollups. Integers are `bigint` and flags
    /// 0/1, as in SQLite; texts compare byte by byte (`COLLATE "C"`), as in SQLite, whatever the database's locale.
    /// Record blocks are compressed already: PostgreSQL stores them as they are
    /// (`STORAGE EXTERNAL`), without compressing them again. A bundle's blocks are found by `bundle_ref` (several
    /// servers write at once, so a bundle's block ids are not one contiguous run).
    private static let v1 = """
        CREATE TABLE bundle (
            id bigserial PRIMARY KEY,
            app_id text COLLATE "C" NOT NULL,
            bundle_id text COLLATE "C" NOT NULL,
            device_id text COLLATE "C",
            app_version text COLLATE "C",
            build text COLLATE "C",
            os text COLLATE "C",
            device_model text COLLATE "C",
            sdk text COLLATE "C",
            uploaded_at bigint,
            received_at bigint NOT NULL,
            clock_offset_ms bigint NOT NULL,
            source text COLLATE "C",
            accepted bigint NOT NULL DEFAULT 0,
            rejected bigint NOT NULL DEFAULT 0,
            pruned_at bigint,
            ts_from bigint,
            ts_to bigint,
            config_ts_from bigint,
            config_ts_to bigint,
            UNIQUE (app_id, bundle_id)
        );
        CREATE INDEX bundle_by_received ON bundle (received_at) WHERE pruned_at IS NULL;
        CREATE TABLE dictionary (
            id bigserial PRIMARY KEY,
            app_id text COLLATE "C",
            adler32 bigint NOT NULL UNIQUE,
            trained_at bigint NOT NULL,
            bytes bytea NOT NULL
        );
        CREATE INDEX dictionary_by_app ON dictionary (app_id, id);
        CREATE TABLE record_block (
            id bigserial PRIMARY KEY,
            bundle_ref bigint NOT NULL REFERENCES bundle (id),
            lines bigint NOT NULL,
            raw_bytes bigint NOT NULL,
            dictionary bigint NOT NULL,
            data bytea NOT NULL
        );
        ALTER TABLE record_block ALTER COLUMN data SET STORAGE EXTERNAL;
        CREATE INDEX record_block_by_bundle ON record_block (bundle_ref);
        CREATE TABLE notification_block (
            key bigint NOT NULL,
            block bigint NOT NULL,
            PRIMARY KEY (key, block)
        );
        CREATE TABLE rejected_line (
            id bigserial PRIMARY KEY,
            bundle_ref bigint NOT NULL REFERENCES bundle (id),
            line bigint NOT NULL,
            reason text COLLATE "C" NOT NULL,
            raw bytea NOT NULL
        );
        CREATE INDEX rejected_line_by_bundle ON rejected_line (bundle_ref);
        CREATE TABLE config_body (
            id bigserial PRIMARY KEY,
            digest bigint NOT NULL,
            app_group text COLLATE "C",
            body bytea NOT NULL
        );
        ALTER TABLE config_body ALTER COLUMN body SET STORAGE EXTERNAL;
        CREATE INDEX config_body_by_digest ON config_body (digest);
        CREATE TABLE config (
            app_id text COLLATE "C" NOT NULL,
            device_id text COLLATE "C" NOT NULL,
            process text COLLATE "C" NOT NULL,
            ts bigint NOT NULL,
            device_ts bigint,
            body_ref bigint NOT NULL,
            PRIMARY KEY (app_id, device_id, process, ts)
        );
        CREATE INDEX config_by_process ON config (app_id, process, ts);
        CREATE TABLE device (
            app_id text COLLATE "C" NOT NULL,
            device_id text COLLATE "C" NOT NULL,
            first_seen bigint NOT NULL,
            last_seen bigint NOT NULL,
            app_version text COLLATE "C",
            os text COLLATE "C",
            device_model text COLLATE "C",
            PRIMARY KEY (app_id, device_id)
        );
        CREATE TABLE notification (
            app_id text COLLATE "C" NOT NULL,
            notification_id text COLLATE "C" NOT NULL,
            device_id text COLLATE "C",
            category text COLLATE "C",
            app_version text COLLATE "C",
            os text COLLATE "C",
            first_ts bigint,
            last_ts bigint,
            sent_ts bigint,
            apns_status bigint,
            has_alert bigint,
            mutable_content bigint,
            service_received bigint NOT NULL DEFAULT 0,
            service_delivered bigint NOT NULL DEFAULT 0,
            service_expired bigint NOT NULL DEFAULT 0,
            service_ms bigint,
            service_crashed bigint NOT NULL DEFAULT 0,
            content_received bigint NOT NULL DEFAULT 0,
            content_crashed bigint NOT NULL DEFAULT 0,
            actions bigint NOT NULL DEFAULT 0,
            app_responses bigint NOT NULL DEFAULT 0,
            records bigint NOT NULL DEFAULT 0,
            device_reached bigint NOT NULL DEFAULT 0,
            downloads bigint NOT NULL DEFAULT 0,
            download_bytes bigint,
            attachment_failure text COLLATE "C",
            cause text COLLATE "C",
            action_list text COLLATE "C",
            PRIMARY KEY (app_id, notification_id)
        );
        CREATE INDEX notification_by_id ON notification (notification_id);
        CREATE INDEX notification_by_time ON notification (app_id, first_ts);
        CREATE INDEX notification_unsettled ON notification (app_id, device_id) WHERE cause IS NULL;
        CREATE INDEX notification_awaiting ON notification (app_id, device_id) WHERE cause = 'awaiting_device_logs';
        CREATE TABLE token (
            id text COLLATE "C" PRIMARY KEY,
            app_id text COLLATE "C",
            scope text COLLATE "C" NOT NULL CHECK (scope IN ('ingest', 'read', 'admin', 'metrics')),
            secret_sha256 bytea NOT NULL,
            label text COLLATE "C",
            created_at bigint NOT NULL,
            revoked_at bigint,
            CHECK (app_id IS NOT NULL OR scope IN ('admin', 'metrics'))
        );
        CREATE TABLE daily (
            app_id text COLLATE "C" NOT NULL, day bigint NOT NULL, category text COLLATE "C" NOT NULL, app_version text COLLATE "C" NOT NULL,
            os text COLLATE "C" NOT NULL, cause text COLLATE "C" NOT NULL, attachment_failure text COLLATE "C" NOT NULL,
            notifications bigint NOT NULL, sent bigint NOT NULL, apns_accepted bigint NOT NULL,
            device_reached bigint NOT NULL, service_ran bigint NOT NULL, service_delivered bigint NOT NULL,
            service_timeouts bigint NOT NULL, service_crashed bigint NOT NULL, content_crashed bigint NOT NULL,
            expanded bigint NOT NULL, acted bigint NOT NULL, downloads bigint NOT NULL, download_bytes bigint NOT NULL,
            attachment_failed bigint NOT NULL, size_under_100k bigint NOT NULL, size_under_1m bigint NOT NULL,
            size_under_10m bigint NOT NULL, size_over_10m bigint NOT NULL, example_id text COLLATE "C",
            PRIMARY KEY (app_id, day, category, app_version, os, cause, attachment_failure)
        );
        CREATE TABLE hourly (
            app_id text COLLATE "C" NOT NULL, hour bigint NOT NULL, category text COLLATE "C" NOT NULL, cause text COLLATE "C" NOT NULL,
            notifications bigint NOT NULL, service_ran bigint NOT NULL, service_timeouts bigint NOT NULL,
            extension_runs bigint NOT NULL, extension_crashes bigint NOT NULL, attachment_tries bigint NOT NULL,
            attachment_failures bigint NOT NULL,
            PRIMARY KEY (app_id, hour, category, cause)
        );
        CREATE TABLE minutely (
            minute bigint NOT NULL, app_id text COLLATE "C" NOT NULL, category text COLLATE "C" NOT NULL,
            notifications bigint NOT NULL, service_ran bigint NOT NULL, service_timeouts bigint NOT NULL,
            extension_runs bigint NOT NULL, extension_crashes bigint NOT NULL, attachment_tries bigint NOT NULL,
            attachment_failures bigint NOT NULL,
            PRIMARY KEY (minute, app_id, category)
        );
        CREATE TABLE daily_duration (
            app_id text COLLATE "C" NOT NULL, day bigint NOT NULL, ms bigint NOT NULL, n bigint NOT NULL,
            PRIMARY KEY (app_id, day, ms)
        );
        CREATE TABLE daily_action (
            app_id text COLLATE "C" NOT NULL, day bigint NOT NULL, action text COLLATE "C" NOT NULL, response text COLLATE "C" NOT NULL, n bigint NOT NULL,
            PRIMARY KEY (app_id, day, action, response)
        );
        """

    /// A search by a cause other than the two a shown card settles finds its rows here, as SQLite's
    /// `v18-notifications-by-cause`.
    private static let v7 = """
        CREATE INDEX notification_by_cause ON notification (app_id, cause, first_ts) WHERE cause NOT IN ('not_expanded', 'ok')
        """
}

extension BundleLayout {
    /// PostgreSQL finds a bundle's blocks by their bundle index, and keeps its client's description on the row.
    static let postgres = BundleLayout(
        firstBlock: "(SELECT min(id) FROM record_block WHERE bundle_ref = u.id)", blocksOfBundle: "b.bundle_ref = u.id",
        client: "u.app_version, u.build, u.os, u.device_model, u.sdk", clientJoin: "", summarized: "true",
        prunedBlocks: "")
}
