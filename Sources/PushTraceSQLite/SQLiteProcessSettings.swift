import CSQLiteSettings
import PushTraceStore

extension SQLiteStore {
    /// Applies pushtrace's process-wide SQLite settings. Call it once, first thing in `main`, before any database is
    /// opened and while no other thread uses SQLite (SQLite's rule for `sqlite3_config`); later it changes nothing.
    ///
    /// Debian's SQLite keeps memory statistics, which take one process-wide mutex around every allocation of every
    /// connection: the writer and the diagnosing readers then contend on it, and even the writer alone pays for it.
    /// pushtrace never reads those statistics, so they are turned off.
    public static func applyProcessSettings() {
        _ = pushtrace_sqlite_disable_memstatus()
    }
}
