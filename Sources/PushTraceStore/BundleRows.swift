import PushTraceCore
import PushTraceRecords

/// What storing a bundle asks of its engine beyond the SQL both engines share (``BundleWriter``): the statements
/// whose shape follows the engine's own schema or means (the bundle row, a block and its index entries), its
/// dictionaries, and what it does once a bundle is in.
///
/// An engine's ingest group conforms: one value per transaction, holding the session the group's statements run in.
package protocol BundleRows: AnyObject {
    associatedtype Session: SQLSession
    /// The session of the group's transaction.
    var session: Session { get }
    /// The config bodies the group has met (``ConfigBodies``).
    var configBodies: ConfigBodies { get }
    /// Whether the bundle row keeps the ids of its first and last blocks (`first_block`, `last_block`).
    var keepsBlockRange: Bool { get }

    /// Runs `body` so that, when it throws, the bundle leaves nothing behind while the group goes on (a savepoint).
    func inSavepoint<T>(_ body: () throws -> T) throws -> T
    /// Stores the bundle's row and answers its id; nil when the app holds a bundle with this ID already (stored
    /// before, or by another server's transaction that committed while this one waited on it). An engine that sends
    /// the row without waiting for its answer may learn that only at the bundle's end: its ``inSavepoint(_:)`` then
    /// undoes the bundle and throws ``BundleStoredBefore``.
    func insertBundle(_ manifest: Manifest, tally: BundleTally, source: String?, receivedAt: Int64) throws -> Int64?
    /// Writes the bundle row's counts and spans once its lines are stored, before its rejected lines (which refer to
    /// the row). By default an update of the row ``insertBundle(_:tally:source:receivedAt:)`` inserted.
    func bundleEnded(ref: Int64, tally: BundleTally, source: String?, receivedAt: Int64, firstBlock: Int64?, lastBlock: Int64?) throws
    /// Records the bundle's device (``SQLSession/devicesSeen(_:)``), and brings its settings summaries up to date when
    /// the bundle stored app config records carrying settings. By default at once.
    func deviceSeen(_ visit: DeviceVisit, settingsChanged: Bool) throws
    /// The dictionary the app's new blocks and config bodies are compressed against.
    func dictionary(for appID: String) throws -> BlockDictionary
    /// A stored dictionary found by its Adler-32, to read a stored config body back.
    func dictionaryBytes(_ identifier: UInt32) -> [UInt8]?
    /// Stores a finished block and its index entries; answers the block's id.
    func storeBlock(_ block: FinishedBlock) throws -> Int64
    /// Silence from a device means something once the device is heard from again, for the pushes it has not
    /// mentioned: whatever waited for it is to be settled again, now or with the group's summaries.
    func heardFrom(_ device: DeviceSeen) throws
    /// A bundle of the group is stored (its savepoint released): its facts, its device, its lines' bytes.
    func stored(_ bundle: StoredBundle) throws
    /// A bundle of the group failed and left nothing behind: what the group remembers of the rows it stored goes.
    func bundleFailed()
}

extension BundleRows {
    package func deviceSeen(_ visit: DeviceVisit, settingsChanged: Bool) throws {
        try session.devicesSeen([visit])
        if settingsChanged { try session.deviceSettingsChanged(appID: visit.appID, deviceID: visit.deviceID) }
    }

    package func bundleEnded(
        ref: Int64, tally: BundleTally, source: String?, receivedAt: Int64, firstBlock: Int64?, lastBlock: Int64?
    ) throws {
        try session.bundleCounted(ref: ref, tally: tally, blockRange: keepsBlockRange ? (firstBlock, lastBlock) : nil)
    }
}

extension SQLSession {
    /// Updates a stored bundle row with its counts and spans, and the ids of its first and last blocks where the
    /// engine keeps them (`blockRange`).
    package func bundleCounted(ref: Int64, tally: BundleTally, blockRange: (first: Int64?, last: Int64?)?) throws {
        let spans = tally.spans
        let blocks: SQLStatement = blockRange.map { ", first_block = \($0.first), last_block = \($0.last)" } ?? ""
        try send(
            """
            UPDATE bundle SET accepted = \(tally.accepted), rejected = \(tally.rejected)\(blocks),
                ts_from = \(spans.lines?.from), ts_to = \(spans.lines?.to),
                config_ts_from = \(spans.configFrom), config_ts_to = \(spans.configTo)
            WHERE id = \(ref)
            """)
    }
}

/// Thrown by ``BundleRows/inSavepoint(_:)`` when the bundle's row turned out to be stored before: its savepoint
/// is undone, and the bundle answers as a duplicate.
package struct BundleStoredBefore: Error {
    package init() {}
}

/// A bundle just stored by a group, as its engine is told of it (``BundleRows/stored(_:)``).
package struct StoredBundle {
    package var result: IngestResult
    /// The bundle's row id.
    package var ref: Int64
    /// The bundle's facts per notification ID, for the group to merge into the summaries.
    package var facts: [String: NotificationFacts]
    /// The device the bundle came from (none for the backend's).
    package var device: DeviceSeen?
    /// Bytes of accepted lines stored in blocks.
    package var storedBytes: Int
}

extension IngestGroup where Self: BundleRows {
    /// Stores one bundle in its own savepoint, by ``BundleWriter``: when `produce` throws, the bundle leaves nothing
    /// behind and the error is rethrown; the rest of the group is unaffected.
    package func ingest(
        source: String?, receivedAt: Int64,
        _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void
    ) throws -> IngestResult {
        var writer = BundleWriter(rows: self, source: source, receivedAt: receivedAt)
        let result: IngestResult
        do {
            result = try inSavepoint {
                try produce { item in try writer.add(item) }
                return try writer.finish()
            }
        } catch is BundleStoredBefore {
            bundleFailed()
            return try writer.storedBefore()
        } catch {
            bundleFailed()
            throw error
        }
        // Only a stored bundle counts: a refused one threw above, a duplicate stored nothing.
        if !result.duplicate {
            try stored(
                StoredBundle(
                    result: result, ref: writer.bundleRef, facts: writer.progress.facts, device: writer.device,
                    storedBytes: writer.storedBytes))
        }
        return result
    }
}
