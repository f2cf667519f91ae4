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

    /// The row id of the body holding each line (with its App Group), in order; a body not stored yet is stored
    /// now, compressed against `dictionary`. The bodies this group has not met are looked up by one statement for
    /// all of them: a bundle repeats each process's config record.
    package func references(
        _ lines: [(line: String, appGroup: String?)], dictionary: BlockDictionary, rows: some BundleRows
    ) throws -> [Int64] {
        let digests = lines.map { ConfigBodyDigest.of($0.line) }
        var ids: [Int64?] = zip(digests, lines).map { find($0, $1.line, $1.appGroup) }
        let unmet = Array(Set(zip(digests, ids).compactMap { $1 == nil ? $0 : nil })).sorted()
        if !unmet.isEmpty {
            let session = rows.session
            let list = SQLStatement.joined(unmet.map { "\($0)" }, separator: ", ")
            // Locked against retention, which deletes the bodies no committed config row refers to (as these).
            for row in try session.rows(
                """
                SELECT id, digest, app_group, body FROM config_body WHERE digest IN (\(list))\(unsafeRaw: session.dialect.lockedAgainstDelete)
                """)
            {
                let digest: Int64 = try row.decode("digest")
                let appGroup = try row.decode("app_group", as: String?.self)
                let waiting = ids.indices.filter { ids[$0] == nil && digests[$0] == digest && lines[$0].appGroup == appGroup }
                guard !waiting.isEmpty else { continue }
                let stored = try Self.text(try row.decode("body"), rows: rows)
                // Byte for byte: `==` on strings is canonical equivalence, and the body must be the line as received.
                let same = waiting.filter { lines[$0].line.utf8.elementsEqual(stored.utf8) }
                guard let first = same.first else { continue }
                let id: Int64 = try row.decode("id")
                for index in same { ids[index] = id }
                remember(digest, id, lines[first].line, appGroup)
            }
        }
        for index in ids.indices where ids[index] == nil {
            let (digest, line) = (digests[index], lines[index])
            // Met again since: an earlier line of this call was the same body, stored now.
            if let id = find(digest, line.line, line.appGroup) {
                ids[index] = id
                continue
            }
            let body = SQLBytes(ConfigBody.compressed(line.line, dictionary: dictionary))
            guard
                let id = try rows.session.rows(
                    "INSERT INTO config_body (digest, app_group, body) VALUES (\(digest), \(line.appGroup), \(body)) RETURNING id"
                ).first?.decode("id", as: Int64.self)
            else { throw StoreError.noRow("the id of a config body stored") }
            ids[index] = id
            remember(digest, id, line.line, line.appGroup)
        }
        return ids.map { $0! }
    }

    /// The id of a body met before holding `line` with `appGroup`.
    private func find(_ digest: Int64, _ line: String, _ appGroup: String?) -> Int64? {
        known[digest]?.first(where: { $0.line.utf8.elementsEqual(line.utf8) && $0.appGroup == appGroup })?.id
    }

    /// Forgets every body met: after a bundle's savepoint rolled back, the rows it stored are gone.
    package func forget() { known.removeAll() }

    /// A stored body's line: deflated, or (a SQLite store written before bodies were) the text itself.
    private static func text(_ body: SQLValue, rows: some BundleRows) throws -> String {
        switch body {
        case .bytes(let bytes): return try ConfigBody.text(compressed: bytes) { rows.dictionaryBytes($0) }
        case .text(let text): return text
        default: throw StoreError.wrongType("body", expected: "bytes", found: body)
        }
    }

    private func remember(_ digest: Int64, _ id: Int64, _ line: String, _ appGroup: String?) {
        // A group of a whole bulk ingest meets every device's config: the memo is bounded, and starts again.
        if known.count >= 50_000 { known.removeAll(keepingCapacity: true) }
        known[digest, default: []].append((id, line, appGroup))
    }
}
