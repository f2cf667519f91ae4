import GRDB
import PushTraceRecords
import PushTraceStore

/// What a bundle's manifest says of the software and hardware that sent it, kept once per combination in `client`:
/// every bundle of a device repeats it until the device updates.
final class Clients {
    struct Description: Hashable {
        var appVersion: String?
        var build: String?
        var os: String?
        var deviceModel: String?
        var sdk: String?

        /// The description a bundle carries: an upload's manifest, or a bundle being copied in.
        init(_ bundle: some ClientFields) {
            (appVersion, build, os, deviceModel, sdk) = (
                bundle.appVersion, bundle.build, bundle.os, bundle.deviceModel, bundle.sdk
            )
        }
    }

    /// Descriptions this group met: description → row id.
    private var known: [Description: Int64] = [:]

    /// Forgets every description met: after a bundle's savepoint rolled back, the rows it stored are gone.
    func forget() { known.removeAll() }

    /// The row id of `description`, stored now when there is none.
    func reference(_ description: Description, db: Database) throws -> Int64 {
        if let id = known[description] { return id }
        let values: [(any DatabaseValueConvertible)?] = [
            description.appVersion, description.build, description.os,
            description.deviceModel, description.sdk,
        ]
        let id: Int64
        if let stored = try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT id FROM client WHERE app_version IS ? AND build IS ? AND os IS ? AND device_model IS ? AND sdk IS ?
                    LIMIT 1
                    """), arguments: StatementArguments(values))
        {
            id = stored
        } else {
            try db.cachedStatement(sql: "INSERT INTO client (app_version, build, os, device_model, sdk) VALUES (?, ?, ?, ?, ?)")
                .execute(arguments: StatementArguments(values))
            id = db.lastInsertedRowID
        }
        // Hostile manifests may vary every field: the memo is bounded, and starts again.
        if known.count >= 10_000 { known.removeAll(keepingCapacity: true) }
        known[description] = id
        return id
    }
}

/// The fields of a bundle that describe its client (``Clients/Description``).
protocol ClientFields {
    var appVersion: String? { get }
    var build: String? { get }
    var os: String? { get }
    var deviceModel: String? { get }
    var sdk: String? { get }
}

extension Manifest: ClientFields {}
extension CopiedBundle: ClientFields {}
