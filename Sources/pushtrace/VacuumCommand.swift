import ArgumentParser
import Foundation
import PushTraceStore

struct Vacuum: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete data past its retention, and give the space back to the file system.",
        discussion: """
            With --retention DAYS, first deletes what is older than that (the records of bundles received \
            before the cut-off, notification summaries whose records all are, superseded config records, and on \
            SQLite the compression dictionaries a newer one replaced once no block names them), in \
            small transactions, showing progress; the rollups behind reports stay, so reports of any period do \
            not change.

            Then gives the space of deleted rows back. A store this version created does it in place: SQLite \
            moves pages from the end of the file into the free ones and cuts the file short, a few thousand \
            pages a transaction, so uploads go on meanwhile and no free disk is needed. A store an older \
            pushtrace created, or any store with --rebuild, is rebuilt instead (SQLite's VACUUM), which also \
            packs what stays tightly and makes an older store one that gives space back in place next time. The \
            rebuild locks the database for its whole run: run it when uploads are quiet (a running server \
            answers 503 while it waits). It writes what the rows still use twice before the file shrinks (a \
            temporary copy, in SQLITE_TMPDIR, TMPDIR or /var/tmp, and the log that carries it back beside the \
            database), so it needs that much free disk; it checks first, and says what is missing instead of \
            starting.

            Examples:
              pushtrace vacuum --retention 30
              pushtrace vacuum --db /var/lib/pushtrace/pushtrace.sqlite --rebuild
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("First delete data older than this many days.", valueName: "days")) var retention: Int?
    @Flag(help: "Rebuild the whole file even when the space can be given back in place (packs what stays; needs free disk).")
    var rebuild = false
    @Flag(help: "Only delete (with --retention); give no space back. SQLite reuses the free pages for new data.")
    var deleteOnly = false
    @Flag(
        help:
            "Only recompute the rollups that reports and alerts read, from the settled notification summaries (for rollups in doubt, or summaries another tool wrote)."
    )
    var rebuildRollups = false

    func validate() throws {
        if let retention, !(1...36_500).contains(retention) { throw ValidationError("--retention must be 1 to 36500 days") }
        if rebuild, deleteOnly { throw ValidationError("--rebuild and --delete-only contradict each other: choose one") }
        if deleteOnly, retention == nil { throw ValidationError("--delete-only deletes what --retention DAYS names: give both") }
        if rebuildRollups, retention != nil || rebuild || deleteOnly {
            throw ValidationError("--rebuild-rollups runs alone: give it without --retention, --rebuild or --delete-only")
        }
    }

    func run() throws {
        let store = try database.existingStore()
        defer { database.close(store) }
        // A lock held past the busy timeout, or a full disk, said in plain words; what was deleted stays deleted.
        do { try run(on: store) } catch { throw store.explaining(error) }
    }

    private func run(on store: any TraceStore) throws {
        if rebuildRollups {
            let start = Date()
            try store.rebuildRollups()
            print("rollups recomputed from the settled summaries in \(seconds(since: start)) s")
            return
        }
        let before = fileSize(database.db)
        if let retention {
            let cutoff = Int64(Date().timeIntervalSince1970 * 1000) - Int64(retention) * 86_400_000
            let start = Date()
            var shown = Date.distantPast
            let report = try store.deleteExpired(before: cutoff) { report in
                // A line every 5 s, as ingest shows its progress: on a large store this runs for minutes.
                if Date().timeIntervalSince(shown) >= 5 {
                    printError("deleting, \(Int(Date().timeIntervalSince(start))) s: \(report)")
                    shown = Date()
                }
                return true
            }
            print("deleted in \(seconds(since: start)) s: \(report)")
        }
        guard !deleteOnly else { return }
        let start = Date()
        if !rebuild, try store.releasesInPlace() {
            var shown = Date()
            try store.releaseFreePages { released, toGo in
                if Date().timeIntervalSince(shown) >= 5 {
                    printError(
                        "giving space back, \(Int(Date().timeIntervalSince(start))) s: \(megabytes(released)) MB "
                            + "released, \(megabytes(toGo)) MB to go")
                    shown = Date()
                }
                return true
            }
            print("gave space back in place in \(seconds(since: start)) s: \(shrinkage(from: before))")
            return
        }
        try store.vacuum { room in
            printError(
                "rebuilding \(database.db): \(megabytes(room.liveBytes)) MB of its \(megabytes(fileSize(database.db))) "
                    + "MB in use, copied through \(room.temporaryDirectory)")
        }
        print("rebuilt \(database.db) in \(seconds(since: start)) s: \(shrinkage(from: before))")
    }

    /// The file's size before and now, and its log's: "52187.7 MB → 47747.6 MB, log 0.0 MB".
    private func shrinkage(from before: Int64) -> String {
        "\(megabytes(before)) MB → \(megabytes(fileSize(database.db))) MB, log \(megabytes(fileSize(database.db + "-wal"))) MB"
    }

    private func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    private func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }

    private func seconds(since start: Date) -> String { String(format: "%.1f", Date().timeIntervalSince(start)) }
}
