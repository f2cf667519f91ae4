import Foundation
import PostgresNIO
import PushTraceStore

/// The shared tasks this process leads: each a row of `lease` (migration `v6-leases`) that names this process as its
/// holder until an expiry, pushed forward each time the holder asks again. Taking or renewing it is one statement,
/// a transaction of its own, so leadership holds the same whether the connection is direct or lent by a pooler in
/// transaction mode, where a session's advisory lock could stay with a connection another client gets next, or be
/// gone by the next statement. A holder that dies is replaced once its lease expires; one that closes gives its
/// leases back at once. Times are the database's, so the servers' clocks do not matter.
struct PostgresLeadership: Sendable {
    /// This process among the store's servers: its host and process ID (what an operator looks for in `lease`) and a
    /// random part, so that a restarted process with the same ID is a new holder.
    let holder: String

    init() {
        let random = UUID().uuidString.prefix(8).lowercased()
        holder = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(random)"
    }

    /// The lease of the alert monitor, and of retention passes.
    static func name(_ task: SharedTask) -> String { task.rawValue }
    static let retention = "retention"

    /// Takes `task`'s lease, or renews it, for `seconds` from now; false when another holder's has not expired.
    func take(_ task: String, forSeconds seconds: Double, _ session: PostgresSession) throws -> Bool {
        try session.query(
            """
            INSERT INTO lease AS l (task, holder, expires_at)
            VALUES (\(task), \(holder), clock_timestamp() + make_interval(secs => \(seconds)))
            ON CONFLICT (task) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
            WHERE l.holder = excluded.holder OR l.expires_at < clock_timestamp()
            RETURNING 1
            """
        ).first(where: { _ in true }) != nil
    }

    /// Pushes `task`'s lease `seconds` on from now if this process still holds it unexpired; false when it does not.
    /// Run inside the transaction of the work it covers, the row stays locked until that work commits, so no
    /// other server can take the lease over while it runs.
    func renew(_ task: String, forSeconds seconds: Double, _ session: PostgresSession) throws -> Bool {
        try session.query(
            """
            UPDATE lease SET expires_at = clock_timestamp() + make_interval(secs => \(seconds))
            WHERE task = \(task) AND holder = \(holder) AND expires_at > clock_timestamp()
            RETURNING 1
            """
        ).first(where: { _ in true }) != nil
    }

    /// Gives `task`'s lease back if this process holds it, so that another server may take it at once.
    func release(_ task: String, _ session: PostgresSession) throws {
        try session.query("DELETE FROM lease WHERE task = \(task) AND holder = \(holder)")
    }

    /// Gives back every lease this process holds.
    func releaseAll(_ session: PostgresSession) throws {
        try session.query("DELETE FROM lease WHERE holder = \(holder)")
    }
}
