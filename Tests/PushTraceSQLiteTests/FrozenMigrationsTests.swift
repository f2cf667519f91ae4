import Foundation
import GRDB
import PushTraceTestSupport
import Testing

@testable import PushTraceSQLite

/// GRDB's rule: a migration, once shipped, is never modified; a store migrated by an earlier release would not run
/// it again. Each migration's statements, as SQLite is given them on an empty database, are held to a digest.
@Suite("SQLite: released migrations are frozen")
struct FrozenMigrationsTests {
    static let released: [(String, String)] = [
        ("v1-bundles-records-summaries", "4f59d2eec6d6aac8"),
        ("v2-tokens", "863fdb74c1a7f7a1"),
        ("v3-rollups", "9edc78895fe667f1"),
        ("v4-minutely", "b7727453dbc11c7d"),
        ("v5-retention", "2613116c377fabe7"),
        // Emptied before migrations were frozen: what it created, v10 drops.
        ("v6-rollup-triggers-without-sorter", "cbf29ce484222325"),
        ("v7-deferred-summaries", "dda20a5dbec9c16d"),
        ("v8-metrics-scope", "8869fdeafcc356b5"),
        ("v9-record-blocks", "392af28b2f646ef3"),
        ("v10-rollups-in-swift", "bb2a05453150866f"),
        ("v11-config-bodies-and-action-lists", "6a51d35ce203b9ee"),
        ("v12-dictionaries-per-app", "5bd4d9a4c5f27b31"),
        ("v13-clients", "b8ba233d1fd309c0"),
        ("v14-bundle-time-spans", "419686994bb78ea4"),
        ("v15-cause-flags", "052edc37381187b9"),
        ("v16-notifications-by-device", "4eba220a5c027503"),
        ("v17-settings-summaries", "cf151070cf23a136"),
        ("v18-notifications-by-cause", "5ae63a53c4ff58a9"),
    ]

    /// Released, then taken back: a store that ran one is brought back without it (`Schema.withdrawn`).
    static let withdrawn: [(String, String)] = [
        ("v15-dictionary-use", "dbcb84265d75b4a2")
    ]

    @Test("each released migration runs the SQL it was released with")
    func releasedMigrationsAreUnchanged() throws {
        let queue = try DatabaseQueue()
        let migrator = Schema.migrator
        var computed: [(String, String)] = []
        for name in migrator.migrations {
            var statements: [String] = []
            try queue.inDatabase { db in
                db.trace { event in
                    guard case .statement(let statement) = event else { return }
                    let sql = statement.sql.trimmingCharacters(in: .whitespacesAndNewlines)
                    // GRDB's own bookkeeping (savepoints, its migration table, foreign key checks) is not the migration's.
                    let keyword = sql.prefix(while: { $0.isLetter }).uppercased()
                    guard !sql.contains("grdb_migrations"),
                        !["SAVEPOINT", "RELEASE", "BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"].contains(keyword)
                    else { return }
                    statements.append(sql)
                }
            }
            try migrator.migrate(queue, upTo: name)
            try queue.inDatabase { $0.trace(nil) }
            computed.append((name, MigrationDigest.of(statements.joined(separator: ";\n"))))
        }
        let difference = MigrationDigest.difference(recorded: Self.released, computed: computed)
        #expect(difference == nil, "\(difference ?? "")")
    }

    /// That `released` only grows, across git's history, is ReleasedMigrationsHistoryTests' (PushTraceStoreTests).
    @Test("the withdrawn list is what the engine undoes, and none was superseded in place")
    func withdrawnAreUndone() {
        #expect(Set(Self.withdrawn.map(\.0)) == Set(Schema.withdrawn.map(\.name)))
        // None superseded in place: every withdrawn name has left the released list.
        #expect(Self.withdrawn.filter { entry in Self.released.contains { $0.0 == entry.0 } }.isEmpty)
    }

    @Test("a store that ran a withdrawn migration opens without it, and takes the migrations it lacks")
    func withdrawnMigrationIsUndone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("withdrawn.sqlite").path
        // The store as the release that ran v15-dictionary-use left it: v1 to v14, then that migration's SQL as it
        // was released.
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v14-bundle-time-spans")
        try queue.write { db in
            try db.execute(sql: "CREATE INDEX record_block_by_dictionary ON record_block(dictionary)")
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v15-dictionary-use')")
        }
        try queue.close()

        let store = try SQLiteStore(path: path)
        let (applied, index) = try store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"),
                try db.indexes(on: "record_block").map(\.name)
            )
        }
        #expect(Set(applied) == Set(Schema.migrator.migrations))
        #expect(!index.contains("record_block_by_dictionary"))
        try store.close()
    }
}
