/// The disk room that rebuilding the database file (`VACUUM`) needs, and the room there is.
///
/// SQLite rebuilds a WAL database in two copies of what its rows still use: first into a temporary file (in
/// ``temporaryDirectory``), then back through the log beside the database. Both are about ``liveBytes``, so on one
/// file system the rebuild needs twice that free; the file itself shrinks only at the end.
public struct RebuildRoom: Sendable, Equatable {
    /// Bytes of the pages the rows still use: about the size of the rebuilt file, of its temporary copy, and of
    /// the log that carries the copy back.
    public var liveBytes: Int64
    /// Where SQLite builds the temporary copy: `SQLITE_TMPDIR`, else `TMPDIR`, else the first writable of
    /// /var/tmp, /usr/tmp, /tmp and the working directory (SQLite's own order).
    public var temporaryDirectory: String
    /// Free bytes on the database's file system.
    public var freeBesideDatabase: Int64
    /// Free bytes on the temporary directory's file system, or nil when it is the database's.
    public var freeInTemporaryDirectory: Int64?

    public init(liveBytes: Int64, temporaryDirectory: String, freeBesideDatabase: Int64, freeInTemporaryDirectory: Int64?) {
        self.liveBytes = liveBytes
        self.temporaryDirectory = temporaryDirectory
        self.freeBesideDatabase = freeBesideDatabase
        self.freeInTemporaryDirectory = freeInTemporaryDirectory
    }

    /// What is missing, in words, or nil when the rebuild fits. A margin of 2 % covers the log's frame headers.
    public var shortfall: String? {
        let copy = liveBytes + liveBytes / 50
        if let freeInTemporaryDirectory {
            var missing: [String] = []
            if freeInTemporaryDirectory < copy {
                missing.append(
                    "\(Self.megabytes(copy)) MB for the temporary copy in \(temporaryDirectory), where "
                        + "\(Self.megabytes(freeInTemporaryDirectory)) MB are free")
            }
            if freeBesideDatabase < copy {
                missing.append(
                    "\(Self.megabytes(copy)) MB for the log beside the database, where "
                        + "\(Self.megabytes(freeBesideDatabase)) MB are free")
            }
            return missing.isEmpty ? nil : "rebuilding needs " + missing.joined(separator: ", and ")
        }
        guard freeBesideDatabase < 2 * copy else { return nil }
        return "rebuilding needs \(Self.megabytes(2 * copy)) MB free (a temporary copy of the \(Self.megabytes(liveBytes)) "
            + "MB still in use, in \(temporaryDirectory), and the log that carries it back), and "
            + "\(Self.megabytes(freeBesideDatabase)) MB are"
    }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
}
