import Foundation
import GRDB
import PushTraceCore
import PushTraceRecords

extension Store {
    /// Diagnoses every notification whose summary changed since it was last diagnosed, and stores its primary
    /// cause in the summary (for `search` and reports). Returns how many were settled.
    ///
    /// - Parameter progress: called after each batch with the number settled so far and the number there were.
    @discardableResult
    public func settleCauses(batchSize: Int = 2_000, progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let total = try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM notification WHERE cause IS NULL") ?? 0
        }
        var done = 0
        let diagnoser = Diagnoser(settings: settings)
        while true {
            let settled = try pool.write { db -> Int in
                let keys = try Row.fetchAll(db, sql: """
                    SELECT app_id, notification_id FROM notification WHERE cause IS NULL LIMIT ?
                    """, arguments: [batchSize])
                let reader = DiagnosisReader(db)
                let update = try db.cachedStatement(sql: "UPDATE notification SET cause = ? WHERE app_id = ? AND notification_id = ?")
                for key in keys {
                    let appID: String = key[0], id: String = key[1]
                    let input = try reader.input(appID: appID, notificationID: id)
                    let cause = diagnoser.diagnose(input).cause
                    update.setUncheckedArguments([cause.rawValue, appID, id])
                    try update.execute()
                }
                return keys.count
            }
            if settled == 0 { break }
            done += settled
            progress?(done, max(total, done))
        }
        return done
    }
}
