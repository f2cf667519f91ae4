import ArgumentParser
import Foundation
import PushTraceStore

struct Vacuum: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete data past its retention, and give the space back to the file system.",
        discussion: """
            With --retention DAYS, first deletes what is older than that (the records of bundles received \
            before the cut-off, notification summaries whose records all are, superseded config records), in \
            small transactions, showing progress; the rollups behind reports stay, so reports of any period do \
            not change. Then rebuilds the database file (SQLite's VACUUM), which frees the space deleted rows \
            left. The rebuild locks the database for its whole run and needs free disk space about the size of \
            the file: run it when uploads are quiet (a running server answers 503 while it waits).

            Examples:
              pushtrace vacuum --retention 30
              pushtrace vacuum --db /var/lib/pushtrace/pushtrace.sqlite
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("First delete data older than this many days.", valueName: "days")) var retention: Int?
    @Flag(help: "Delete only; skip the rebuild.") var noRebuild = false

    func validate() throws {
        if let retention, retention < 1 { throw ValidationError("--retention must be at least 1 day") }
    }

    func run() throws {
        let store = try database.existingStore()
        let before = fileSize()
        if let retention {
            let cutoff = Int64(Date().timeIntervalSince1970 * 1000) - Int64(retention) * 86_400_000
            let start = Date()
            var shown = Date.distantPast
            let report = try store.deleteExpired(before: cutoff) { report in
                if Date().timeIntervalSince(shown) >= 1 {
                    printError("deleting: \(report)")
                    shown = Date()
                }
                return true
            }
            print("deleted in \(String(format: "%.1f", Date().timeIntervalSince(start))) s: \(report)")
        }
        guard !noRebuild else { return }
        let start = Date()
        try store.vacuum()
        print("rebuilt \(database.db) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s: "
              + "\(megabytes(before)) MB → \(megabytes(fileSize())) MB")
    }

    private func fileSize() -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: database.db))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    private func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
}
