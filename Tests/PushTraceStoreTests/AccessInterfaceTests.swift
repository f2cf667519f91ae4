import Foundation
import GRDB
import PushTraceStore
import PushTraceTestSupport
import Testing

@testable import PushTracePostgres
@testable import PushTraceSQLite

@Suite("Every engine: tokens, the read-only query, an app's notifications")
struct AccessInterfaceTests {
    @Test("a token verifies with its secret only, covers its app, and stops verifying once revoked", arguments: TestEngine.all)
    func tokens(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let store = temporary.store
        let (info, text) = try await store.createToken(appID: "app.one", scope: .ingest, label: "ci", now: Lines.t0)
        #expect(try await store.verifyToken(text.text) == info)
        #expect(info.covers(appID: "app.one") && !info.covers(appID: "app.two"))
        let forged = TokenText("pt_\(text.id)_\(String(text.secret.reversed()))")
        #expect(try await store.verifyToken(try #require(forged).text) == nil)
        #expect(try await store.verifyToken("pt_000000000000_nothing") == nil)
        let (admin, _) = try await store.createToken(appID: nil, scope: .admin, label: nil, now: Lines.t0 + 1)
        #expect(try await store.tokens().map(\.id) == [info.id, admin.id])
        #expect(try await store.revokeToken(id: info.id, now: Lines.t0 + 2))
        #expect(try await store.verifyToken(text.text) == nil)
        #expect(try await store.tokens().first?.revokedAt == Lines.t0 + 2)
        #expect(try await !store.revokeToken(id: "ffffffffffff", now: Lines.t0 + 3))
        #expect(try await store.storedToken(id: admin.id)?.scope == "admin")
        #expect(try await store.storedToken(id: "ffffffffffff") == nil)
    }

    @Test("a stored token whose scope this version does not know verifies as nothing (fails closed)")
    func unknownScopeFailsClosed() throws {
        let text = TokenText.generate()
        var stored = StoredToken(
            id: text.id, appID: "app.one", scope: "read", label: nil, createdAt: Lines.t0, revokedAt: nil,
            secretSHA256: text.secretHash)
        #expect(stored.verifying(text)?.scope == .read)
        stored.scope = "superuser"
        #expect(stored.verifying(text) == nil)
        stored.scope = "read"
        stored.revokedAt = Lines.t0 + 1
        #expect(stored.verifying(text) == nil)
    }

    @Test(
        "a stored token of a scope this version does not know is listed as unknown and verifies as nothing",
        arguments: TestEngine.all)
    func unknownStoredScope(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        let (info, text) = try await temporary.store.createToken(appID: "app.one", scope: .read, label: nil, now: Lines.t0)
        // The schema's own check refuses such a scope: a later version that widened it, or a hand edit, gets past.
        switch engine {
        case .sqlite:
            try await temporary.sqlite.pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
                try db.execute(sql: "UPDATE token SET scope = 'superuser' WHERE id = ?", arguments: [info.id])
                try db.execute(sql: "PRAGMA ignore_check_constraints = OFF")
            }
        case .postgres:
            let store = try #require(temporary.store as? PostgresStore)
            _ = try store.withSession { session in
                _ = try session.changes("ALTER TABLE token DROP CONSTRAINT token_scope_check")
                return try session.changes("UPDATE token SET scope = 'superuser' WHERE id = \(info.id)")
            }
        }
        let listed = try #require(try await temporary.store.tokens().first)
        #expect(listed.id == info.id && listed.scope == nil)
        #expect(try await temporary.store.verifyToken(text.text) == nil)
    }

    @Test(
        "the read-only query answers a SELECT with its columns and rows, and refuses a statement that writes",
        arguments: TestEngine.all)
    func readOnlyQuery(engine: TestEngine) throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        var columns: [String] = []
        var rows: [[QueryValue]] = []
        try temporary.store.readOnlyQuery(
            "SELECT notification_id, records FROM notification",
            columns: { columns = $0 }, row: { rows.append($0) })
        #expect(columns == ["notification_id", "records"])
        #expect(rows == [[.text("n-1"), .integer(3)]])
        // An empty answer still names its columns, so that `pushtrace sql` prints its header on every engine.
        var emptyColumns: [String] = []
        try temporary.store.readOnlyQuery(
            "SELECT notification_id, cause FROM notification WHERE records < 0",
            columns: { emptyColumns = $0 }, row: { _ in Issue.record("no row was asked for") })
        #expect(emptyColumns == ["notification_id", "cause"])
        #expect(throws: StoreError.wouldWrite) {
            try temporary.store.readOnlyQuery("DELETE FROM notification", columns: { _ in }, row: { _ in })
        }
        #expect(try temporary.counts()["notification"] == 1)
        #expect {
            try temporary.store.readOnlyQuery("SELECT nothing FROM nowhere", columns: { _ in }, row: { _ in })
        } throws: { ($0 as? StoreError)?.code == .invalidQuery }
    }

    @Test(
        "pushtrace sql on PostgreSQL runs as DATABASE_reader, which may only SELECT; without that role (an owner without CREATEROLE) it refuses, until an administrator makes it as docs/deploy.md says",
        .enabled(if: TestEngine.postgresCluster != nil))
    func selectOnlyRole() throws {
        let temporary = try TemporaryStore(engine: .postgres)
        try temporary.ingest([Lines.manifest()] + Lines.serviceSteps("n-1"))
        func answer(_ store: any TraceStore, _ sql: String) throws -> [QueryValue] {
            var rows: [[QueryValue]] = []
            try store.readOnlyQuery(sql, columns: { _ in }, row: { rows.append($0) })
            return rows.first ?? []
        }
        let who = try answer(temporary.store, "SELECT current_user::text, current_database()::text, session_user::text")
        guard case .text(let database) = who[1] else {
            Issue.record("no database: \(who)")
            return
        }
        #expect(who[0] == .text(database + "_reader") && who[2] != who[0], "\(who)")
        let privileges = try answer(
            temporary.store,
            """
            SELECT has_table_privilege('notification', 'SELECT')::int, has_table_privilege('notification', 'INSERT')::int,
                has_table_privilege('token', 'UPDATE')::int, has_table_privilege('record_block', 'DELETE')::int,
                has_schema_privilege(current_schema(), 'CREATE')::int
            """)
        #expect(privileges == [.integer(1), .integer(0), .integer(0), .integer(0), .integer(0)])
        do {
            _ = try answer(temporary.store, "SELECT pg_read_file('PG_VERSION')")
            Issue.record("the reader read a server file")
        } catch StoreError.invalidQuery(let message) {
            #expect(message.contains("permission denied"), "\(message)")
        }

        // A store whose owner cannot create roles: its migration goes on without the reader, and sql refuses.
        let cluster = try #require(TestEngine.postgresCluster)
        let suffix = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let (name, owner) = ("pt_noreader_\(suffix)", "pt_owner_\(suffix)")
        let url = try PostgresDatabases.create(name, cluster: cluster, role: owner, password: "owner-secret")
        defer {
            try? PostgresDatabases.drop(name, cluster: cluster)
            try? PostgresDatabases.dropRole(name + "_reader", cluster: cluster)
            try? PostgresDatabases.dropRole(owner, cluster: cluster)
        }
        let store = try PostgresStore(url: url, connections: 2)
        defer { try? store.close() }
        #expect { _ = try answer(store, "SELECT count(*) FROM notification") } throws: { ($0 as? StoreError)?.code == .noReader }
        do { _ = try answer(store, "SELECT 1") } catch StoreError.noReader(let message) {
            #expect(message.contains(name + "_reader"), "\(message)")
        }
        // docs/deploy.md's statements, as an administrator runs them (in the store's database for the grants).
        var administrator = try #require(URLComponents(string: cluster))
        administrator.path = "/" + name
        for statement in [
            "CREATE ROLE \(name)_reader NOLOGIN", "GRANT \(name)_reader TO \(owner)",
            "GRANT USAGE ON SCHEMA public TO \(name)_reader", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(name)_reader",
            "ALTER DEFAULT PRIVILEGES FOR ROLE \(owner) IN SCHEMA public GRANT SELECT ON TABLES TO \(name)_reader",
        ] {
            try PostgresDatabases.execute(statement, on: try #require(administrator.string))
        }
        #expect(try answer(store, "SELECT count(*), current_user::text FROM notification") == [.integer(0), .text(name + "_reader")])
        // A reader an administrator later gives more, or grants to a role other than the owner (or one an earlier
        // text of the migration adopted), is refused by sql itself, until it is made safe again; a login of its own
        // is no reason (docs/security.md suggests one).
        try PostgresDatabases.execute("CREATE ROLE \(owner)_peer NOLOGIN", on: cluster)
        defer { try? PostgresDatabases.dropRole(owner + "_peer", cluster: cluster) }
        for (change, undo) in [
            ("ALTER ROLE \(name)_reader CREATEDB", "ALTER ROLE \(name)_reader NOCREATEDB"),
            ("GRANT pg_read_server_files TO \(name)_reader", "REVOKE pg_read_server_files FROM \(name)_reader"),
            ("GRANT \(name)_reader TO \(owner)_peer", "REVOKE \(name)_reader FROM \(owner)_peer"),
        ] {
            try PostgresDatabases.execute(change, on: cluster)
            #expect(throws: StoreError.unsafeReader(name + "_reader"), "\(change)") {
                _ = try answer(store, "SELECT 1")
            }
            try PostgresDatabases.execute(undo, on: cluster)
        }
        try PostgresDatabases.execute("ALTER ROLE \(name)_reader LOGIN", on: cluster)
        #expect(try answer(store, "SELECT 1") == [.integer(1)])

        // A role of the reader's name that can log in is never adopted: the migration fails, naming it.
        let taken = "pt_taken_\(suffix)"
        _ = try PostgresDatabases.create(taken, cluster: cluster)
        defer {
            try? PostgresDatabases.drop(taken, cluster: cluster)
            try? PostgresDatabases.dropRole(taken + "_reader", cluster: cluster)
        }
        try PostgresDatabases.execute("CREATE ROLE \(taken)_reader LOGIN", on: cluster)
        var takenURL = try #require(URLComponents(string: cluster))
        takenURL.path = "/" + taken
        do {
            _ = try PostgresStore(url: try #require(takenURL.string), connections: 2)
            Issue.record("a login role was adopted as the reader")
        } catch {
            #expect("\(error)".contains("the role \(taken)_reader exists and can log in"), "\(error)")
        }
        // Nor one granted to another role, which could then read this database through it.
        try PostgresDatabases.execute("ALTER ROLE \(taken)_reader NOLOGIN", on: cluster)
        try PostgresDatabases.execute("GRANT \(taken)_reader TO \(owner)", on: cluster)
        do {
            _ = try PostgresStore(url: try #require(takenURL.string), connections: 2)
            Issue.record("a role granted to another was adopted as the reader")
        } catch {
            #expect("\(error)".contains("is granted to other roles"), "\(error)")
        }
    }

    @Test(
        "a notification's app: the one it is stored for, or the caller's; several or an unknown app said in words",
        arguments: TestEngine.all)
    func appLookup(engine: TestEngine) async throws {
        let temporary = try TemporaryStore(engine: engine)
        try temporary.ingest([Lines.manifest(app: "app.one")] + Lines.serviceSteps("shared"))
        try temporary.ingest([Lines.manifest(app: "app.two")] + Lines.serviceSteps("shared"))
        try temporary.ingest([Lines.manifest(app: "app.two")] + Lines.serviceSteps("only-two"))
        let store = temporary.store
        #expect(try await store.appIDs() == ["app.one", "app.two"])
        #expect(try await store.app(nil, ofNotification: "only-two") == "app.two")
        #expect(try await store.app("app.one", ofNotification: "shared") == "app.one")
        #expect(try await store.app(nil, ofNotification: "nowhere") == nil)
        await #expect(throws: StoreError.ambiguousNotification("shared", apps: ["app.one", "app.two"])) {
            try await store.app(nil, ofNotification: "shared")
        }
        await #expect(throws: StoreError.unknownApp("app.three", known: ["app.one", "app.two"])) {
            try await store.requireKnownApp("app.three")
        }
    }
}
