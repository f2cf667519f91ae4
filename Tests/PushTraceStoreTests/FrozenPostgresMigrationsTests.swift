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

    @Test("each released migration is the SQL it was released with")
    func releasedMigrationsAreUnchanged() {
        let computed = PostgresSchema.migrations.map { ($0.name, MigrationDigest.of($0.sql)) }
        let difference = MigrationDigest.difference(recorded: Self.released, computed: computed)
        #expect(difference == nil, "\(difference ?? "")")
    }
}
