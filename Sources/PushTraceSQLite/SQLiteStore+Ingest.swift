import GRDB
import PushTraceCore
import PushTraceStore

extension SQLiteStore {
    /// Runs `body` in one write transaction in which several bundles can be stored, each all-or-nothing on its
    /// own (a savepoint per bundle), and commits once at the end: many small bundles cost one commit, not one each.
    /// The bundles' per-notification facts are merged in memory and written to the summaries once, before the commit:
    /// a notification mentioned by several bundles of the group is upserted once, not once per bundle.
    ///
    /// With a `backlog`, the facts are not written in this transaction: they join the backlog once it has committed,
    /// and ``writeSummaries(_:)`` writes many groups' facts at once later (see ``SummaryBacklog``).
    ///
    /// Results obtained inside `body` are acknowledgements only once this returns: nothing is committed before.
    /// If `body` throws, nothing of the group is stored.
    func inGroupCommit<T>(
        deferringSummariesTo backlog: SummaryBacklog? = nil,
        _ body: (GroupCommit) throws -> T
    ) throws -> T {
        var committed: (result: T, group: GroupCommit)?
        // A dictionary trained by a group that then fails was never stored: forget it (and what it was cached with).
        defer { if committed == nil { currentDictionaries.forget() } }
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let group = GroupCommit(
                    db: db, settings: settings, defersSummaries: backlog != nil,
                    dictionaries: try currentDictionaries.inTransaction(db, dictionaries: dictionaries),
                    configBodies: ConfigBodies(dictionaries: dictionaries), clients: Clients())
                let result = try body(group)
                if backlog == nil { try group.summaries.write(db) }
                committed = (result, group)
                return .commit
            }
        }
        backlog?.add(committed!.group.summaries, bundles: committed!.group.storedBundles.ids)
        return committed!.result
    }
}

/// Bundles being stored in one transaction (see ``SQLiteStore/inGroupCommit(deferringSummariesTo:_:)``).
public struct GroupCommit: IngestGroup {
    let db: Database
    let settings: DiagnosisSettings
    /// Whether the bundles' facts go to a backlog rather than to `notification` in this transaction.
    let defersSummaries: Bool
    /// The facts of the bundles stored so far, written to `notification` when the group commits (or handed to its
    /// backlog once it has).
    let summaries = PendingSummaries()
    /// The row ids of the bundles stored so far (duplicates and refused bundles left out).
    let storedBundles = BundleIDs()
    /// What the group's record blocks are compressed against, per app: an app's is trained between two bundles of
    /// the group once it holds enough lines (a bulk ingest's first group holds thousands of bundles).
    let dictionaries: AppDictionaries
    /// The config bodies stored or met so far.
    let configBodies: ConfigBodies
    /// The client descriptions stored or met so far.
    let clients: Clients

    /// Stores one bundle in its own savepoint: when `produce` throws, the bundle leaves nothing behind and the
    /// error is rethrown; the rest of the group is unaffected.
    public func ingest(
        source: String?, receivedAt: Int64,
        _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void
    ) throws -> IngestResult {
        var result: IngestResult?
        var facts: [String: NotificationFacts] = [:]
        var bundleRef: Int64 = 0
        var storedBytes = 0
        do {
            try db.inSavepoint {
                var writer = try BundleWriter(
                    db: db, source: source, receivedAt: receivedAt, settings: settings,
                    configBodies: configBodies, clients: clients,
                    summarized: !defersSummaries, dictionaries: dictionaries)
                try produce { item in try writer.add(item) }
                result = try writer.finish()
                facts = writer.facts
                bundleRef = writer.bundleRef
                storedBytes = writer.storedBytes
                return writer.progress.isDuplicate ? .rollback : .commit
            }
        } catch {
            // The bundle's rows are gone with its savepoint: so are the bodies and clients it stored, which the
            // group's memos must not hand to the next bundle.
            configBodies.forget()
            clients.forget()
            throw error
        }
        if let result, !result.duplicate { try dictionaries.trainIfDue(appID: result.appID, added: storedBytes) }
        // Only a stored bundle's facts count: a refused one threw above, a duplicate has none.
        if !result!.duplicate {
            summaries.merge(appID: result!.appID, facts)
            storedBundles.ids.append(bundleRef)
        }
        return result!
    }
}

/// Row ids of bundles, collected by a group as it stores them.
final class BundleIDs {
    var ids: [Int64] = []
}
