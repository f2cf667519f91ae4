import Foundation
import PushTraceTestSupport
import Testing

@testable import PushTracePostgres

/// A PostgreSQL migration, once released, never changes: a database an earlier release migrated would not run it
/// again. Each one's SQL is held to a digest.
@Suite("PostgreSQL: released migrations are frozen")
struct FrozenPostgresMigrationsTests {
    static let released: [(String, String)] = [
        ("v1-blocks-summaries-rollups-tokens", "12d01bb92b40c627"),
        ("v2-cause-flags", "c19dcd2aac6e4e63"),
        ("v3-notifications-by-device", "a0c9ac0390273c69"),
        ("v4-settings-summaries", "3db6d03b301d4328"),
        ("v5-select-only-reader", "9b7d008be4f42f86"),
        ("v6-leases", "38e76f5024b96335"),
        ("v7-notifications-by-cause", "3a7c40f4a677814b"),
    ]

    /// Released, then taken back. `v2-dictionary-use` is undone when a database that ran it opens
    /// (`PostgresSchema.withdrawn`). The first two texts of `v5-select-only-reader` adopted a reader role the
    /// released one refuses: `pushtrace sql` checks the role itself before it switches to it, whichever text made it.
    static let withdrawn: [(String, String)] = [
        ("v2-dictionary-use", "ea19d57aa8b2be14"),
        ("v5-select-only-reader", "198e42c2bb48cf68"),
        ("v5-select-only-reader", "71f262db8d122ccd"),
    ]

    @Test("each released migration is the SQL it was released with")
    func releasedMigrationsAreUnchanged() {
        let computed = PostgresSchema.migrations.map { ($0.name, MigrationDigest.of($0.sql)) }
        let difference = MigrationDigest.difference(recorded: Self.released, computed: computed)
        #expect(difference == nil, "\(difference ?? "")")
    }

    /// That `released` only grows, across git's history, is ReleasedMigrationsHistoryTests'.
    @Test("the withdrawn list is what the engine undoes, and only the two earlier v5 texts were superseded in place")
    func withdrawnAreUndone() {
        let names = Set(PostgresSchema.migrations.map(\.name))
        #expect(Set(Self.withdrawn.map(\.0)).subtracting(names) == Set(PostgresSchema.withdrawn.map(\.name)))
        // Superseded in place (a withdrawn text of a name still released): these two, released before the history
        // check, and never another.
        let superseded = Self.withdrawn.filter { names.contains($0.0) }.map { "\($0.0) \($0.1)" }
        #expect(superseded == ["v5-select-only-reader 198e42c2bb48cf68", "v5-select-only-reader 71f262db8d122ccd"])
    }

    @Test(
        "a database that ran a withdrawn migration opens without it, and takes the migrations it lacks",
        .enabled(if: TestEngine.postgresCluster != nil))
    func withdrawnMigrationIsUndone() throws {
        let cluster = try #require(TestEngine.postgresCluster)
        let name = "pt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let url = try PostgresDatabases.create(name, cluster: cluster)
        defer {
            try? PostgresDatabases.drop(name, cluster: cluster)
            // The migrations make the reader role, which is the cluster's, not the database's.
            try? PostgresDatabases.dropRole(name + "_reader", cluster: cluster)
        }
        // The database as the release that ran v2-dictionary-use left it: v1, then that migration's SQL as it was
        // released.
        try PostgresDatabases.execute(
            "CREATE TABLE pushtrace_migration (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
            on: url)
        for statement in PostgresSchema.migrations[0].sql.components(separatedBy: ";\n")
        where !statement.allSatisfy(\.isWhitespace) {
            try PostgresDatabases.execute(statement, on: url)
        }
        try PostgresDatabases.execute("CREATE INDEX record_block_by_dictionary ON record_block (dictionary)", on: url)
        try PostgresDatabases.execute(
            "INSERT INTO pushtrace_migration (name) VALUES ('\(PostgresSchema.migrations[0].name)'), ('v2-dictionary-use')",
            on: url)

        let store = try PostgresStore(url: url, connections: 1)
        defer { try? store.close() }
        var applied: [String] = []
        var index = ""
        try store.readOnlyQuery(
            "SELECT name, coalesce(to_regclass('record_block_by_dictionary')::text, '') FROM pushtrace_migration",
            columns: { _ in }
        ) { row in
            if case .text(let name) = row[0] { applied.append(name) }
            if case .text(let found) = row[1] { index = found }
        }
        #expect(Set(applied) == Set(PostgresSchema.migrations.map(\.name)))
        #expect(index == "")
    }
}
