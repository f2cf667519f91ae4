extension Record {
    /// Reads a record line in one pass over its bytes, or returns nil to leave the line to `JSONDecoder`.
    ///
    /// Record lines are flat objects of strings, integers and booleans, and `JSONDecoder`'s generic machinery was
    /// most of the cost of decoding them. This reader takes only the lines it reads exactly as `JSONDecoder` does:
    /// well-formed JSON, known fields of their exact type (or `null`), no known field twice, no escape in a key;
    /// config records' nested fields as `Record+ScanningConfig.swift` reads them. Anything else (a malformed line,
    /// a field of the wrong type) returns nil, and the strict decoder reads the line and names what is wrong with it.
    /// A test over simulated corpora and the record fuzzer check that the two agree on every line this one takes.
    public init?(scanning bytes: UnsafeRawBufferPointer) {
        let read = FlatJSONScanner.readObject(bytes, keys: Self.scannedKeys) { index, s in set(Self.keys[index], from: &s) }
        guard read else { return nil }
    }

    /// Only the `ts` of a record line, read in one pass as ``init(scanning:)`` reads it, without the other fields:
    /// `.some(nil)` when the line has no `ts` (or `null`), and nil to leave the line to a full reader (a `ts` that
    /// is not an integer, written twice or spelled with an escape, or a line that is not a well-formed object).
    public static func timestamp(scanning bytes: UnsafeRawBufferPointer) -> Int64?? {
        var ts: Int64?
        guard FlatJSONScanner.readObject(bytes, keys: timestampKey, read: { _, s in s.integer(into: &ts) }) else { return nil }
        return .some(ts)
    }

    private static let timestampKey = [Array(CodingKeys.ts.rawValue.utf8)]

    /// The known keys, in `CodingKeys` order, and their bytes (a key's index is its bit in the seen-keys mask).
    private static let keys = CodingKeys.allCases
    private static let scannedKeys = keys.map { Array($0.rawValue.utf8) }

    /// Reads the value of `key` (not `null`) at the scanner; false when it is not of the field's type.
    private mutating func set(_ key: CodingKeys, from s: inout FlatJSONScanner) -> Bool {
        switch key {
        case .type: return s.text(into: &type)
        case .ts: return s.integer(into: &ts)
        case .process: return s.text(into: &process)
        case .event: return s.text(into: &event)
        case .notificationID: return s.text(into: &notificationID)
        case .level: return s.text(into: &level)
        case .message: return s.text(into: &message)
        case .appGroup: return s.text(into: &appGroup)
        case .categories: return s.categories(into: &categories)
        case .infoPlist: return s.plist(into: &infoPlist)
        case .interactiveControls: return s.boolean(into: &interactiveControls)
        case .category: return s.text(into: &category)
        case .mutableContent: return s.boolean(into: &mutableContent)
        case .hasAlert: return s.boolean(into: &hasAlert)
        case .payloadBytes: return s.integer(into: &payloadBytes)
        case .deviceID: return s.text(into: &deviceID)
        case .attachmentURL: return s.text(into: &attachmentURL)
        case .status: return s.integer(into: &status)
        case .reason: return s.text(into: &reason)
        case .urlHost: return s.text(into: &urlHost)
        case .durationMs: return s.integer(into: &durationMs)
        case .httpStatus: return s.integer(into: &httpStatus)
        case .bytes: return s.integer(into: &bytes)
        case .mime: return s.text(into: &mime)
        case .error: return s.text(into: &error)
        case .ok: return s.boolean(into: &ok)
        case .uti: return s.text(into: &uti)
        case .elapsedMs: return s.integer(into: &elapsedMs)
        case .lastFootprintBytes: return s.integer(into: &lastFootprintBytes)
        case .action: return s.text(into: &action)
        case .response: return s.text(into: &response)
        case .waitedMs: return s.integer(into: &waitedMs)
        case .suite: return s.text(into: &suite)
        case .key: return s.text(into: &self.key)
        case .found: return s.boolean(into: &found)
        case .notificationSettings: return s.settings(into: &notificationSettings)
        case .interruptionLevel: return s.text(into: &interruptionLevel)
        case .collapseID: return s.text(into: &collapseID)
        case .expiration: return s.integer(into: &expiration)
        }
    }
}
