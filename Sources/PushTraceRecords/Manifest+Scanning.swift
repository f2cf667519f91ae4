extension Manifest {
    /// Reads a manifest line in one pass over its bytes, or returns nil to leave the line to `JSONDecoder`.
    ///
    /// Every bundle starts with one, and `JSONDecoder` spent more on it than on a dozen record lines. As
    /// `Record(scanning:)` does, this reader takes only what it reads exactly as `JSONDecoder` does (well-formed
    /// JSON, known fields of their exact type or `null`, none twice, no escaped key) and returns nil for anything
    /// else, which the strict decoder then reads or describes. A test and the record fuzzer check that they agree.
    public init?(scanning bytes: UnsafeRawBufferPointer) {
        let read = FlatJSONScanner.readObject(bytes, keys: Self.scannedKeys) { index, s in set(Self.keys[index], from: &s) }
        guard read else { return nil }
    }

    private static let keys = CodingKeys.allCases
    private static let scannedKeys = keys.map { Array($0.rawValue.utf8) }

    /// Reads the value of `key` (not `null`) at the scanner; false when it is not of the field's type.
    private mutating func set(_ key: CodingKeys, from s: inout FlatJSONScanner) -> Bool {
        switch key {
        case .type: return s.text(into: &type)
        case .schema:
            var value: Int64?
            guard s.integer(into: &value), let value, let schema = Int(exactly: value) else { return false }
            self.schema = schema
            return true
        case .bundleID: return s.text(into: &bundleID)
        case .appID: return s.text(into: &appID)
        case .appVersion: return s.text(into: &appVersion)
        case .build: return s.text(into: &build)
        case .os: return s.text(into: &os)
        case .deviceModel: return s.text(into: &deviceModel)
        case .deviceID: return s.text(into: &deviceID)
        case .uploadedAt: return s.integer(into: &uploadedAt)
        case .sdk: return s.text(into: &sdk)
        }
    }
}
