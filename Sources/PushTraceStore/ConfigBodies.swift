/// The bodies of config records, each kept once in `config_body`: every bundle of a device repeats its config
/// records, and a `config` row only refers to the body it had.
///
/// A body is found again by the 64-bit FNV-1a digest of its line (``ConfigBodyDigest``), and only taken when the
/// stored line is the same, byte for byte (two lines may share a digest). A group remembers the bodies it has met,
/// so that a device's repeated config costs a lookup in memory, not a read and a decompression.
package final class ConfigBodies {
    /// Bodies met by this group: digest → (row id, line, App Group).
    private var known: [Int64: [(id: Int64, line: String, appGroup: String?)]] = [:]

    package init() {}

    /// The row id of the body holding `line` (with its App Group), stored now, compressed against `dictionary`,
    /// when there is none.
    package func reference(
        _ line: String, appGroup: String?, dictionary: BlockDictionary, rows: some BundleRows
    ) throws -> Int64 {
        let digest = ConfigBodyDigest.of(line)
        if let id = known[digest]?.first(where: { $0.line.utf8.elementsEqual(line.utf8) && $0.appGroup == appGroup })?.id {
            return id
        }
        let session = rows.session
        // Locked against retention, which deletes the bodies no committed config row refers to (as this one's).
        let candidates = try session.rows(
            """
            SELECT id, app_group, body FROM config_body WHERE digest = \(digest)\(unsafeRaw: session.dialect.lockedAgainstDelete)
            """)
        for row in candidates where try row.decode("app_group", as: String?.self) == appGroup {
            // Byte for byte: `==` on strings is canonical equivalence, and the body must be the line as received.
            if try Self.text(try row.decode("body"), rows: rows).utf8.elementsEqual(line.utf8) {
                let id: Int64 = try row.decode("id")
                remember(digest, id, line, appGroup)
                return id
            }
        }
        let body = SQLBytes(ConfigBody.compressed(line, dictionary: dictionary))
        guard
            let id = try session.rows(
                "INSERT INTO config_body (digest, app_group, body) VALUES (\(digest), \(appGroup), \(body)) RETURNING id"
            ).first?.decode("id", as: Int64.self)
        else { throw SQLRowError.noRow("the id of a config body stored") }
        remember(digest, id, line, appGroup)
        return id
    }

    /// Forgets every body met: after a bundle's savepoint rolled back, the rows it stored are gone.
    package func forget() { known.removeAll() }

    /// A stored body's line: deflated, or (a SQLite store written before bodies were) the text itself.
    private static func text(_ body: SQLValue, rows: some BundleRows) throws -> String {
        switch body {
        case .bytes(let bytes): return try ConfigBody.text(compressed: bytes) { rows.dictionaryBytes($0) }
        case .text(let text): return text
        default: throw SQLRowError.wrongType("body", expected: "bytes", found: body)
        }
    }

    private func remember(_ digest: Int64, _ id: Int64, _ line: String, _ appGroup: String?) {
        // A group of a whole bulk ingest meets every device's config: the memo is bounded, and starts again.
        if known.count >= 50_000 { known.removeAll(keepingCapacity: true) }
        known[digest, default: []].append((id, line, appGroup))
    }
}
