import Foundation
import NIOCore
import PostgresNIO
import PushTraceGzip
import PushTraceStore

/// The preset dictionaries record blocks are compressed against (`dictionary`), as the SQLite engine keeps them:
/// per app, trained from a sample of several devices' lines (``DictionaryTraining``) and again as the app's volume
/// grows; a block names its own by its Adler-32, so a dictionary never changes once stored. New blocks take the
/// app's newest: each group looks for dictionaries another server trained since. Two servers may train an app's at
/// once: both are kept (each names the blocks compressed against it).
final class PostgresDictionaries: @unchecked Sendable {
    private let lock = NSLock()
    /// Dictionaries read back, by Adler-32: they never change.
    private var byIdentifier: [UInt32: [UInt8]] = [:]
    /// What each app's new blocks are compressed against: its newest dictionary when this process last looked.
    private var ownByApp: [String: BlockDictionary] = [:]
    /// The newest dictionary id this process has seen: a newer one empties ``ownByApp``.
    private var newestID: Int64 = -1
    /// Per app: bytes of lines stored since its training was last looked at (nil: not yet by this process).
    private var sinceLastLook: [String: Int] = [:]
    /// Per app with dictionaries of its own: how many.
    private var generations: [String: Int] = [:]
    /// Per app: looks in a row that found no full sample (``DictionaryTraining/lookBytes(generation:misses:)``).
    private var misses: [String: Int] = [:]

    /// Looks, once per group, for a dictionary another server trained since: new blocks take an app's newest.
    func refresh(_ session: PostgresSession) throws {
        let newest =
            try session.query("SELECT coalesce(max(id), 0) FROM dictionary").first(where: { _ in true })?
            .decode(Int64.self) ?? 0
        lock.withLock {
            if newest != newestID {
                ownByApp.removeAll()
                generations.removeAll()
                newestID = newest
            }
        }
    }

    /// The dictionary a block's header names, read from the database the first time.
    func lookup(_ identifier: UInt32, _ session: PostgresSession) -> [UInt8]? {
        if let bytes = lock.withLock({ byIdentifier[identifier] }) { return bytes }
        guard
            let row = try? session.query("SELECT bytes FROM dictionary WHERE adler32 = \(Int64(identifier))")
                .first(where: { _ in true }), let buffer = try? row.decode(ByteBuffer.self)
        else { return nil }
        let bytes = Array(buffer.readableBytesView)
        lock.withLock { byIdentifier[identifier] = bytes }
        return bytes
    }

    /// What `appID`'s new blocks are compressed against: its newest dictionary, else none.
    func current(for appID: String, _ session: PostgresSession) throws -> BlockDictionary {
        if let own = lock.withLock({ ownByApp[appID] }) { return own }
        guard
            let row = try session.query(
                """
                SELECT id, bytes FROM dictionary WHERE app_id = \(appID) ORDER BY id DESC LIMIT 1
                """
            ).first(where: { _ in true })
        else { return .none }
        let (id, buffer) = try row.decode((Int64, ByteBuffer).self)
        let dictionary = BlockDictionary(id: id, appID: appID, bytes: Array(buffer.readableBytesView))
        lock.withLock { ownByApp[appID] = dictionary }
        return dictionary
    }

    /// Trains a dictionary for `appID`, inside the caller's transaction, when enough lines were stored since the
    /// last one (its first, once a full sample can be drawn); call after a bundle that stored `added` bytes of
    /// lines. Training never fails a bundle.
    ///
    /// Returns the dictionary trained (`trained`: the one the caller's transaction trained before), for the caller's
    /// transaction alone until it commits: another writer of this
    /// process must not compress against a dictionary whose row may yet be rolled back. Once committed, the next
    /// ``refresh(_:)`` finds it for every writer.
    func trainIfDue(
        appID: String, added: Int, trained: BlockDictionary?, _ session: PostgresSession
    ) throws -> BlockDictionary? {
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
        if !hasOwn, missed > 0 {
            guard counted >= DictionaryTraining.lookBytes(generation: 0, misses: missed) else { return nil }
        }
        if hasOwn {
            var generation = lock.withLock { generations[appID] } ?? -1
            if generation < 0 {
                let row = try session.query("SELECT count(*) FROM dictionary WHERE app_id = \(appID)").first(where: { _ in true })
                generation = Int(try row?.decode(Int64.self) ?? 0)
                lock.withLock { generations[appID] = generation }
            }
            guard counted >= DictionaryTraining.lookBytes(generation: generation, misses: missed) else { return nil }
        }
        lock.withLock {
            sinceLastLook[appID] = 0
            misses[appID, default: 0] += 1
        }
        var sample = DictionaryTraining.Sample()
        let reader = StoredLineReader { [self] in lookup($0, session) }
        // The first block of each of the app's newest bundles, whatever it was compressed against; a damaged block is
        // left out of the sample. Newest by arrival, not by id: each writer takes its ids ahead from the sequence, so
        // with several writers (or servers) a bundle's id does not say when it came.
        for row in try session.query(
            """
            SELECT b.device_id, b.id, r.id, r.lines, r.raw_bytes, r.data FROM bundle b
            JOIN LATERAL (
                SELECT id, lines, raw_bytes, data FROM record_block WHERE bundle_ref = b.id ORDER BY id LIMIT 1
            ) r ON true
            WHERE b.app_id = \(appID) AND b.pruned_at IS NULL
            ORDER BY b.received_at DESC, b.id DESC LIMIT \(Int64(DictionaryTraining.sampledBundles))
            """)
        {
            guard !sample.isFull else { break }
            let (device, bundle, id, count, rawBytes, data) = try row.decode(
                (String?, Int64, Int64, Int64, Int64, ByteBuffer).self)
            let source = DictionaryTraining.source(deviceID: device, bundle: bundle)
            guard sample.wants(source) else { continue }
            guard
                let lines = try? reader.decode(
                    StoredBlockRow(
                        id: id, lines: Int(count), rawBytes: Int(rawBytes),
                        data: Array(data.readableBytesView), appID: appID, deviceID: device,
                        clockOffsetMs: 0))
            else { continue }
            sample.offer(lines, source: source)
        }
        guard sample.isEnough else { return nil }
        let bytes = DictionaryTraining.dictionary(from: sample.lines)
        guard !bytes.isEmpty else { return nil }
        let identifier = Int64(DictionaryDeflate.identifier(of: bytes))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // A clash of Adler-32s with another dictionary stores nothing: the app goes on with what it had.
        let inserted = try session.query(
            """
            INSERT INTO dictionary (app_id, adler32, trained_at, bytes) VALUES (\(appID), \(identifier), \(now), \(ByteBuffer(bytes: bytes)))
            ON CONFLICT (adler32) DO NOTHING RETURNING id
            """
        ).first(where: { _ in true })
        guard let inserted else { return nil }
        let id = try inserted.decode(Int64.self)
        lock.withLock {
            generations[appID] = nil
            misses[appID] = nil
        }
        return BlockDictionary(id: id, appID: appID, bytes: bytes)
    }

    /// Forgets what a transaction that rolled back may have trained.
    func forget() {
        lock.withLock {
            ownByApp.removeAll()
            generations.removeAll()
            misses.removeAll()
            newestID = -1
        }
    }
}
