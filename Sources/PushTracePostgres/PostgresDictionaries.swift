import Foundation
import NIOCore
import PostgresNIO
import PushTraceGzip
import PushTraceStore

/// The preset dictionaries record blocks are compressed against (`dictionary`), as the SQLite engine keeps them:
/// one per app, trained from its first ``DictionaryTraining/trainingBytes`` of lines; a block names its own by its
/// Adler-32, so a dictionary never changes once stored. Two servers may train an app's at once: both are kept (each
/// names the blocks compressed against it), and new blocks take the newest.
final class PostgresDictionaries: @unchecked Sendable {
    private let lock = NSLock()
    /// Dictionaries read back, by Adler-32: they never change.
    private var byIdentifier: [UInt32: [UInt8]] = [:]
    /// What each app's new blocks are compressed against: an app's own dictionary never changes once it has one.
    private var ownByApp: [String: BlockDictionary] = [:]
    /// Per app without a dictionary of its own: bytes of lines stored since its training was last looked at.
    private var sinceLastLook: [String: Int] = [:]

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

    /// Trains `appID`'s dictionary, inside the caller's transaction, once the app has no dictionary of its own and
    /// holds enough lines; call after a bundle that stored `added` bytes of lines. Training never fails a bundle.
    func trainIfDue(appID: String, added: Int, _ session: PostgresSession) throws {
        let due: Bool = lock.withLock {
            guard ownByApp[appID] == nil else { return false }
            guard let seen = sinceLastLook[appID] else { return true }
            sinceLastLook[appID] = seen + added
            return seen + added >= DictionaryTraining.trainingBytes
        }
        guard due, try current(for: appID, session).appID == nil else { return }
        lock.withLock { sinceLastLook[appID] = 0 }
        var lines: [String] = []
        var stored = 0
        let reader = StoredLineReader { [self] in lookup($0, session) }
        // The app's first blocks, whatever they were compressed against; a damaged block is left out of the sample.
        for row in try session.query(
            """
            SELECT r.id, r.lines, r.raw_bytes, r.data FROM record_block r JOIN bundle b ON b.id = r.bundle_ref
            WHERE b.app_id = \(appID) ORDER BY r.id LIMIT 1024
            """)
        {
            guard stored < DictionaryTraining.trainingBytes else { break }
            let (id, count, rawBytes, data) = try row.decode((Int64, Int64, Int64, ByteBuffer).self)
            stored += Int(rawBytes)
            lines +=
                (try? reader.decode(
                    StoredBlockRow(
                        id: id, lines: Int(count), rawBytes: Int(rawBytes),
                        data: Array(data.readableBytesView), appID: appID, deviceID: nil,
                        clockOffsetMs: 0))) ?? []
        }
        guard stored >= DictionaryTraining.trainingBytes else { return }
        let bytes = DictionaryTraining.dictionary(from: lines)
        guard !bytes.isEmpty else { return }
        let identifier = Int64(DictionaryDeflate.identifier(of: bytes))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // A clash of Adler-32s with another dictionary stores nothing: the app goes on without one.
        let inserted = try session.query(
            """
            INSERT INTO dictionary (app_id, adler32, trained_at, bytes) VALUES (\(appID), \(identifier), \(now), \(ByteBuffer(bytes: bytes)))
            ON CONFLICT (adler32) DO NOTHING RETURNING id
            """
        ).first(where: { _ in true })
        if let inserted {
            // Kept for this process once the transaction commits; a rollback is undone by `forget()`.
            let dictionary = BlockDictionary(id: try inserted.decode(Int64.self), appID: appID, bytes: bytes)
            lock.withLock { ownByApp[appID] = dictionary }
        }
    }

    /// Forgets what a transaction that rolled back may have trained.
    func forget() {
        lock.withLock { ownByApp.removeAll() }
    }
}
