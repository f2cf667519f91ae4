import GRDB
import PushTraceCore

extension Store {
    /// Stores one bundle in one transaction.
    ///
    /// `produce` is handed a sink and feeds it the bundle's items as they are decoded (see ``BundleDecoder``); when
    /// it throws, nothing of the bundle stays behind. The result is returned only after the commit.
    ///
    /// - Parameters:
    ///   - source: where the bundle came from (a file name, a request ID), kept with the bundle.
    ///   - receivedAt: when the bundle was received, epoch milliseconds: the reference for clock correction.
    public func ingest(source: String?, receivedAt: Int64,
                       _ produce: (_ sink: (BundleItem) throws -> Void) throws -> Void) throws -> IngestResult {
        try pool.writeWithoutTransaction { db in
            var result: IngestResult?
            try db.inTransaction(.immediate) {
                var writer = try BundleWriter(db: db, source: source, receivedAt: receivedAt, settings: settings)
                try produce { item in try writer.add(item) }
                result = try writer.finish()
                return writer.isDuplicate ? .rollback : .commit
            }
            return result!
        }
    }
}
