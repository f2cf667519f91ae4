import Foundation
import PushTraceGzip

/// The preset dictionaries record blocks are compressed against (`dictionary`), shared by a store's connections.
///
/// Each app gets its own: apps differ in categories, URLs, messages and config, and a dictionary trained on one
/// app's lines helps another's little. An app's first blocks are deflated with the store's shared dictionary when it
/// has one (stores written before dictionaries were per app) or on their own; once the app holds
/// ``DictionaryTraining/trainingBytes`` of lines from several devices, a dictionary is trained from them
/// (``DictionaryTraining``), and again as its volume grows; new blocks take the newest. A block names its dictionary
/// by its Adler-32, so a dictionary never changes once stored. Each group looks for dictionaries another writer
/// trained since; two writers may train an app's at once, and both are kept.
package final class BlockDictionaries: @unchecked Sendable {
    private let lock = NSLock()
    /// How the engine's schema finds a bundle's first block.
    private let layout: BundleLayout
    /// Dictionaries read back, by Adler-32: they never change.
    private var byIdentifier: [UInt32: [UInt8]] = [:]
    /// What each app's new blocks are compressed against: its newest dictionary when this process last looked.
    private var currentByApp: [String: BlockDictionary] = [:]
    /// The newest dictionary id this process has seen: a newer one empties ``currentByApp``.
    private var newestID: Int64 = -1
    /// Per app: bytes of lines stored since its training was last looked at (nil: not yet by this process). Training
    /// is looked at again only once enough more were stored (``DictionaryTraining/lookBytes(generation:misses:)``),
    /// so a stream of small or empty bundles costs no scan of the app's bundles each.
    private var sinceLastLook: [String: Int] = [:]
    /// Per app with dictionaries of its own: how many.
    private var generations: [String: Int] = [:]
    /// Per app: looks in a row that found no full sample.
    private var misses: [String: Int] = [:]

    package init(layout: BundleLayout) {
        self.layout = layout
    }

    /// Looks, once per group, for a dictionary another writer trained since: new blocks take an app's newest.
    package func refresh(_ session: some SQLSession) throws {
        let newest: Int64 = try session.rows("SELECT coalesce(max(id), 0) FROM dictionary").first?.decode(at: 0) ?? 0
        lock.withLock {
            if newest != newestID {
                currentByApp.removeAll()
                generations.removeAll()
                newestID = newest
            }
        }
    }

    /// The dictionary a block's header names, read from the database the first time.
    package func lookup(_ identifier: UInt32, _ session: some SQLSession) -> [UInt8]? {
        if let bytes = lock.withLock({ byIdentifier[identifier] }) { return bytes }
        guard
            let row = try? session.rows("SELECT bytes FROM dictionary WHERE adler32 = \(Int64(identifier))").first,
            let bytes = try? row.decode(at: 0, as: SQLBytes.self).bytes
        else { return nil }
        lock.withLock { byIdentifier[identifier] = bytes }
        return bytes
    }

    /// What `appID`'s new blocks are compressed against: its newest dictionary, else the newest shared one, else none.
    package func current(for appID: String, _ session: some SQLSession) throws -> BlockDictionary {
        if let current = lock.withLock({ currentByApp[appID] }) { return current }
        guard
            let row = try session.rows(
                """
                SELECT id, app_id, bytes FROM dictionary WHERE app_id = \(appID) OR app_id IS NULL
                ORDER BY app_id IS NULL, id DESC LIMIT 1
                """
            ).first
        else { return .none }
        let dictionary = BlockDictionary(
            id: try row.decode(at: 0), appID: try row.decode(at: 1), bytes: try row.decode(at: 2, as: SQLBytes.self).bytes)
        lock.withLock { currentByApp[appID] = dictionary }
        return dictionary
    }

    /// Trains a dictionary for `appID`, inside the caller's transaction, when enough lines were stored since the
    /// last one (its first, once a full sample can be drawn); call after a bundle that stored `added` bytes of
    /// lines. Training never fails a bundle.
    ///
    /// Returns the dictionary trained (`trained`: the one the caller's transaction trained before), for the caller's
    /// transaction alone until it commits: another writer must not compress against a dictionary whose row may yet
    /// be rolled back. Once committed, the next ``refresh(_:)`` finds it for every writer.
    package func trainIfDue(appID: String, added: Int, trained: BlockDictionary?, _ session: some SQLSession) throws -> BlockDictionary? {
        // After the caller's transaction trained one, ``current(for:_:)`` would read that row and keep it for every
        // writer: it is not asked.
        let hasOwn = try trained != nil || current(for: appID, session).appID == appID
        let counted: Int? = lock.withLock {
            guard let seen = sinceLastLook[appID] else {
                // The first look of this process: an app with a dictionary starts counting (a restart trains nothing).
                if hasOwn { sinceLastLook[appID] = added }
                return hasOwn ? nil : 0
            }
            sinceLastLook[appID] = seen + added
            return seen + added >= DictionaryTraining.trainingBytes ? seen + added : nil
        }
        guard let counted else { return nil }
        let missed = lock.withLock { misses[appID] ?? 0 }
        if hasOwn || missed > 0 {
            var generation = hasOwn ? lock.withLock { generations[appID] } ?? -1 : 0
            if generation < 0 {
                generation = try session.rows("SELECT count(*) FROM dictionary WHERE app_id = \(appID)").first?.decode(at: 0) ?? 0
                lock.withLock { generations[appID] = generation }
            }
            guard counted >= DictionaryTraining.lookBytes(generation: generation, misses: missed) else { return nil }
        }
        lock.withLock {
            sinceLastLook[appID] = 0
            misses[appID, default: 0] += 1
        }
        let sample = try sample(appID: appID, session)
        guard sample.isEnough else { return nil }
        let bytes = DictionaryTraining.dictionary(from: sample.lines)
        guard !bytes.isEmpty else { return nil }
        let identifier = Int64(DictionaryDeflate.identifier(of: bytes))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // A clash of Adler-32s with another dictionary stores nothing: the app goes on with what it had.
        guard
            let inserted = try session.rows(
                """
                INSERT INTO dictionary (app_id, adler32, trained_at, bytes) VALUES (\(appID), \(identifier), \(now), \(SQLBytes(bytes)))
                ON CONFLICT (adler32) DO NOTHING RETURNING id
                """
            ).first
        else { return nil }
        lock.withLock {
            generations[appID] = nil
            misses[appID] = nil
        }
        return BlockDictionary(id: try inserted.decode(at: 0), appID: appID, bytes: bytes)
    }

    /// How many bundles' first blocks one statement of ``sample(appID:_:)`` reads.
    static var bundlesPerRead: Int { 32 }

    /// The first block of each of the app's newest bundles, whatever it was compressed against, a few devices' worth
    /// at least, read a few bundles at a time until it is full; a damaged block is left out. Newest by arrival, not
    /// by id: with several writers, each taking its ids ahead, a bundle's id does not say when it came.
    private func sample(appID: String, _ session: some SQLSession) throws -> DictionaryTraining.Sample {
        var sample = DictionaryTraining.Sample()
        let reader = StoredLineReader { [self] in lookup($0, session) }
        var before: (receivedAt: Int64, id: Int64) = (.max, .max)
        var read = 0
        while !sample.isFull, read < DictionaryTraining.sampledBundles {
            let rows = try session.rows(
                """
                SELECT u.received_at, u.device_id, u.id, b.id, b.lines, b.raw_bytes, b.data
                FROM bundle u\(unsafeRaw: session.dialect.indexedBy("bundle_by_received"))
                JOIN record_block b ON b.id = \(unsafeRaw: layout.firstBlock)
                WHERE u.app_id = \(appID) AND u.pruned_at IS NULL AND (u.received_at, u.id) < (\(before.receivedAt), \(before.id))
                ORDER BY u.received_at DESC, u.id DESC LIMIT \(Int64(min(Self.bundlesPerRead, DictionaryTraining.sampledBundles - read)))
                """)
            for row in rows where !sample.isFull {
                let (device, bundle): (String?, Int64) = (try row.decode(at: 1), try row.decode(at: 2))
                before = (try row.decode(at: 0), bundle)
                let source = DictionaryTraining.source(deviceID: device, bundle: bundle)
                guard sample.wants(source) else { continue }
                let block = StoredBlockRow(
                    id: try row.decode(at: 3), lines: try row.decode(at: 4), rawBytes: try row.decode(at: 5),
                    data: try row.decode(at: 6, as: SQLBytes.self).bytes, appID: appID, deviceID: device, clockOffsetMs: 0)
                guard let lines = try? reader.decode(block) else { continue }
                sample.offer(lines, source: source)
            }
            read += rows.count
            if rows.count < Self.bundlesPerRead { break }
        }
        return sample
    }

    /// Forgets what a transaction that rolled back may have trained.
    package func forget() {
        lock.withLock {
            currentByApp.removeAll()
            generations.removeAll()
            misses.removeAll()
            newestID = -1
        }
    }
}

/// The dictionaries of one write transaction: the store's, as they were when it began (``BlockDictionaries/refresh(_:)``),
/// and those it trained, its own until it commits.
package struct TransactionDictionaries<Session: SQLSession> {
    private let shared: BlockDictionaries
    private let session: Session
    private var trained: [String: BlockDictionary] = [:]

    package init(_ shared: BlockDictionaries, _ session: Session) throws {
        self.shared = shared
        self.session = session
        try shared.refresh(session)
    }

    /// What `appID`'s new blocks are compressed against.
    package func current(for appID: String) throws -> BlockDictionary {
        try trained[appID] ?? shared.current(for: appID, session)
    }

    /// A dictionary by its Adler-32.
    package func bytes(_ identifier: UInt32) -> [UInt8]? { shared.lookup(identifier, session) }

    /// Trains `appID`'s next dictionary when it is due (``BlockDictionaries/trainIfDue(appID:added:trained:_:)``):
    /// call after a bundle that stored `added` bytes of lines.
    package mutating func trainIfDue(appID: String, added: Int) throws {
        if let new = try shared.trainIfDue(appID: appID, added: added, trained: trained[appID], session) { trained[appID] = new }
    }
}
