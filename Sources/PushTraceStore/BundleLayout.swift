/// Where the engines' `bundle` rows still differ, as SQL over a bundle `u`, so that a statement reading bundles with
/// their blocks or their client is written once: SQLite keeps the range of a bundle's blocks and a reference to its
/// client's description on the row, PostgreSQL finds the blocks by their bundle index and keeps the description
/// on the row itself.
package struct BundleLayout: Sendable {
    /// The id of the bundle's first block.
    package var firstBlock: String
    /// A condition on `record_block b` that holds for the bundle's blocks, written to use the index the engine keeps.
    package var blocksOfBundle: String
    /// The client's app version, build, OS, device model and SDK, in that order.
    package var client: String
    /// What follows `FROM bundle u` for ``client`` to be read (empty where the row holds it).
    package var clientJoin: String
    /// Whether the bundle's summaries are written (SQLite's server may hold them in memory a moment).
    package var summarized: String
    /// What follows `SET pruned_at = …` when a bundle's blocks are deleted (empty where the row names none).
    package var prunedBlocks: String

    package init(
        firstBlock: String, blocksOfBundle: String, client: String, clientJoin: String, summarized: String, prunedBlocks: String
    ) {
        (self.firstBlock, self.blocksOfBundle, self.client, self.clientJoin) = (firstBlock, blocksOfBundle, client, clientJoin)
        (self.summarized, self.prunedBlocks) = (summarized, prunedBlocks)
    }
}
