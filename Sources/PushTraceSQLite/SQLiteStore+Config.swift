import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords
import PushTraceStore

extension SQLiteStore {
    /// What app `appID` is configured with, from the latest config record of each process on any of its devices
    /// (docs/protocol.md#config-records): the categories the app registers, those its content extension handles, whether it has a service
    /// extension. Nil when no config record of that app is stored.
    public func latestConfiguration(appID: String) throws -> AppConfiguration? {
        try pool.read { db in
            var latest: [ProcessKind: PushTraceRecords.Record] = [:]
            for process in [ProcessKind.app, .service, .content] {
                guard
                    let stored = try DatabaseValue.fetchOne(
                        db,
                        sql: """
                            SELECT b.body FROM config c JOIN config_body b ON b.id = c.body_ref
                            WHERE c.app_id = ? AND c.process = ? ORDER BY c.ts DESC, c.device_id DESC LIMIT 1
                            """, arguments: [appID, process.rawValue]), !stored.isNull
                else { continue }
                let body = try ConfigBody.text(stored, dictionaries: dictionaries, db: db)
                guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                else { continue }
                latest[process] = PushTraceRecords.Record(jsonObject: object)
            }
            guard !latest.isEmpty else { return nil }
            return AppConfiguration(
                registeredCategories: latest[.app]?.categories?.map(\.id),
                contentCategories: latest[.content]?.infoPlist?.categories,
                hasServiceExtension: latest[.service] != nil)
        }
    }
}
