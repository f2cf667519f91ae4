import Foundation
import PushTraceCore

#if canImport(CGlibcMalloc)
    import CGlibcMalloc
#endif

/// The server's memory for uploads, counted in bytes: what every request holds of its decoded bundle, from the
/// first line decoded until its commit is acknowledged (the writer's queue included).
///
/// A request takes room ahead of decoding, in steps, waiting a little while the budget is spent (reading no more of
/// its body meanwhile, so TCP pushes back on the client) and refused with 429 when none frees up in time. Room is
/// also taken without waiting while a chunk decodes: a small gzip chunk can inflate to megabytes, and the records
/// it yields are charged before they are kept, so no request holds more than it was granted.
///
/// One token cannot take everything: an ingest token (which every copy of an app holds, so strangers have it too)
/// may run at most ``Limits/uploadsPerToken`` uploads at once and hold at most ``Limits/tokenShare`` of the budget,
/// so other apps' uploads keep being served while one misbehaves. Admin tokens and `--no-auth` (the operator's
/// own replays and load tests) share the budget without a per-caller cap.
final class IngestBudget: @unchecked Sendable {
    /// The budget's settings (``ServerSettings``).
    struct Limits: Sendable {
        /// All uploads together, in bytes.
        var bytes: Int
        /// The part of ``bytes`` one ingest token may hold.
        var tokenShare: Double
        /// Uploads one ingest token may run at once.
        var uploadsPerToken: Int
        /// How long a request waits for room before it is refused with 429.
        var wait: Duration
    }

    /// A request's hold on the budget; give it back with ``end(_:)``.
    final class Ticket: @unchecked Sendable {
        fileprivate let caller: String?
        /// Bytes granted to this request.
        fileprivate(set) var granted = 0
        /// Bytes of what the request holds, as charged.
        fileprivate(set) var used = 0
        fileprivate var ended = false

        fileprivate init(caller: String?) { self.caller = caller }

        /// Granted bytes not yet used.
        var headroom: Int { granted - used }
    }

    /// Why a request got no room.
    enum Refusal: Error {
        /// The caller already runs as many uploads as it may.
        case tooManyUploads(limit: Int)
        /// No room came free in time (the whole budget, or the caller's share of it).
        case noRoom(callerShare: Bool)
        /// The request alone needs more than the budget (or the caller's share) holds: it would never fit.
        case neverFits(limit: Int)
    }

    let limits: Limits
    private let lock = NSLock()
    private var used = 0
    private var byCaller: [String: (bytes: Int, uploads: Int)] = [:]
    /// The most held since the last trim, to know when freed memory is worth handing back to the system.
    private var heldSinceTrim = 0
    private var lastTrim = ContinuousClock.now

    init(_ limits: Limits) {
        self.limits = limits
    }

    /// Bytes held by all requests now.
    var inUse: Int { lock.withLock { used } }

    /// Starts a request for `caller` (an ingest token's ID; nil for callers without a per-caller cap).
    func begin(caller: String?) throws(Refusal) -> Ticket {
        let admitted = lock.withLock { () -> Bool in
            guard let caller else { return true }
            let uploads = byCaller[caller]?.uploads ?? 0
            guard uploads < limits.uploadsPerToken else { return false }
            byCaller[caller, default: (0, 0)].uploads = uploads + 1
            return true
        }
        guard admitted else { throw .tooManyUploads(limit: limits.uploadsPerToken) }
        return Ticket(caller: caller)
    }

    /// Grants up to `bytes` more to `ticket` (no more than its share leaves), waiting up to ``Limits/wait`` for room.
    func reserve(_ ticket: Ticket, _ bytes: Int) async throws {
        let wanted = min(bytes, share(of: ticket) - ticket.granted)
        guard wanted > 0 else { return }
        let deadline = ContinuousClock.now + limits.wait
        while let refusal = tryGrant(ticket, wanted) {
            guard ContinuousClock.now < deadline else { throw refusal }
            // Polled rather than queued: waits are short and rare, and a waiter that gives up needs no removal.
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Charges `bytes` the request now holds, granting more at once (without waiting) when its headroom is short;
    /// throws when no room is left, or when the request alone would pass its share (it must then be refused).
    func charge(_ ticket: Ticket, _ bytes: Int) throws(Refusal) {
        let share = share(of: ticket)
        guard ticket.used + bytes <= share else { throw .neverFits(limit: share) }
        if ticket.headroom < bytes, let refusal = tryGrant(ticket, bytes - ticket.headroom) { throw refusal }
        ticket.used += bytes
    }

    /// The most one request of `ticket`'s caller may hold: the caller's share of the budget, or all of it.
    private func share(of ticket: Ticket) -> Int {
        ticket.caller == nil ? limits.bytes : Int(Double(limits.bytes) * limits.tokenShare)
    }

    /// Gives back all that `ticket` holds. Once the budget is idle after holding much, freed memory is handed back
    /// to the system (glibc keeps freed heap pages otherwise, and the process would stay at its peak).
    func end(_ ticket: Ticket) {
        let trim = lock.withLock { () -> Bool in
            guard !ticket.ended else { return false }
            ticket.ended = true
            used -= ticket.granted
            if let caller = ticket.caller, let held = byCaller[caller] {
                byCaller[caller] = held.uploads > 1 ? (held.bytes - ticket.granted, held.uploads - 1) : nil
            }
            guard used < Self.step, heldSinceTrim >= Self.trimAfter, ContinuousClock.now - lastTrim > .seconds(1) else {
                return false
            }
            heldSinceTrim = 0
            lastTrim = .now
            return true
        }
        if trim { Self.returnFreedMemory() }
    }

    /// The step in which room is granted ahead of decoding.
    static let step = 1 << 20
    /// How much the budget must have held before going idle for a trim to be worth it.
    private static let trimAfter = 32 << 20

    private func tryGrant(_ ticket: Ticket, _ bytes: Int) -> Refusal? {
        let share = share(of: ticket)
        return lock.withLock {
            guard used + bytes <= limits.bytes else { return .noRoom(callerShare: false) }
            if let caller = ticket.caller {
                guard (byCaller[caller]?.bytes ?? 0) + bytes <= share else { return .noRoom(callerShare: true) }
                byCaller[caller, default: (0, 0)].bytes += bytes
            }
            used += bytes
            ticket.granted += bytes
            heldSinceTrim = max(heldSinceTrim, used)
            return nil
        }
    }

    /// Hands freed heap memory back to the system, off the caller's thread (a trim of a large heap takes a while).
    private static func returnFreedMemory() {
        #if canImport(CGlibcMalloc)
            Thread.detachNewThread { _ = malloc_trim(0) }
        #endif
    }
}

extension BundleItem {
    /// What holding this item costs, as the budget charges it: its line twice (the text kept to store, and the
    /// decoded fields, whose strings are copies of it), a fixed overhead for the rest, and each element of a config
    /// record's arrays.
    var heldBytes: Int {
        switch self {
        case .manifest: return 1024
        case .record(let record):
            // A config record's arrays turn every few bytes of text into a whole `String`: charged per element too.
            let config = record.record.categories.map { $0.reduce(0) { $0 + 1 + ($1.actions?.count ?? 0) } } ?? 0
            return 2 * record.json.utf8.count + 1024 + 64 * (config + (record.record.infoPlist?.categories?.count ?? 0))
        case .rejected(let rejected): return rejected.raw.count + rejected.reason.utf8.count + 256
        }
    }
}
