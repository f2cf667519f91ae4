/// How far the conversion of a store's per-record rows into record blocks has gone (``SQLiteStore`` converts on open).
public struct ConversionProgress: Sendable, Equatable {
    /// Bundles converted so far, in this process.
    public var bundles = 0
    /// Bundles that were left to convert when this process began.
    public var totalBundles = 0
    /// Records moved into blocks so far, in this process.
    public var records = 0

    public init(bundles: Int = 0, totalBundles: Int = 0, records: Int = 0) {
        self.bundles = bundles
        self.totalBundles = totalBundles
        self.records = records
    }
}
