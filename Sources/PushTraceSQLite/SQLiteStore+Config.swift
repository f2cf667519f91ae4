import PushTraceCore
import PushTraceStore

extension SQLiteStore {
    /// What app `appID` is configured with (``ConfigurationReading/latest(appID:_:dictionaries:)``); nil when no
    /// config record of that app is stored.
    public func latestConfiguration(appID: String) throws -> AppConfiguration? {
        try pool.read { db in
            try ConfigurationReading.latest(appID: appID, SQLiteSession(db: db)) { [dictionaries] in
                dictionaries.lookup($0, in: db)
            }
        }
    }
}
