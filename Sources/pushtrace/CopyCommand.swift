import ArgumentParser
import Foundation
import PushTraceRecords
import PushTraceStore

struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a whole store into a new one, on the same engine or the other.",
        discussion: """
            Moves everything a store holds into an empty store: every bundle (pruned ones too, so a re-upload is \
            still answered duplicate), its compressed record blocks and rejected lines, config records, devices, \
            notification summaries, tokens (their hashes: every token keeps working) and the rollups reports and \
            alerts read (they outlive the records retention deletes). Every why, search, report and alert then \
            answers the same from the copy. (One exception: lines of two bundles that two PostgreSQL servers \
            stored at the same moment, copied into SQLite, which keeps each bundle's blocks together, may trade \
            places in a why's timeline when their times are the same millisecond.)

            The source is read in one consistent moment; stop the servers writing it first, or uploads after that \
            moment are not in the copy (an SQLite store whose server runs is refused). An SQLite source written by \
            an older pushtrace is upgraded first, as every command does. The target must hold nothing: a new \
            SQLite file, or an empty PostgreSQL database (create it with CREATE DATABASE). The notification index \
            is computed again from the blocks' lines; when the copy is done, every other table is counted in \
            both stores (the source's in its moment), and the command fails unless each count is the same. Into \
            PostgreSQL the copy is one transaction, which locks the tables until it ends (nothing else may use \
            the database meanwhile), and one that fails leaves the database empty; into SQLite, one that fails \
            leaves a partial file: remove it and copy again.

            Examples:
              pushtrace copy --from pushtrace.sqlite --to postgres://pushtrace@db.internal/pushtrace
              pushtrace copy --from postgres://pushtrace@db.internal/pushtrace --to backup.sqlite
            """)

    @Option(help: ArgumentHelp("The store to copy: an SQLite file, or a postgres:// URL.", valueName: "path-or-url"))
    var from: String
    @Option(
        help: ArgumentHelp(
            "The empty store to fill: a new SQLite file, or a postgres:// URL of an empty database.",
            valueName: "path-or-url"))
    var to: String

    func validate() throws {
        DatabaseOptions.warnOfPasswordInArguments()
        guard from != to else { throw ValidationError("--from and --to name the same store: copy into another one") }
        if case .sqlite(let path) = StoreEngine(db: from), !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no database at \(path) (--from)")
        }
    }

    /// Creates the SQLite target, which must not exist yet: not as a file another user made ready (an empty file
    /// would be taken for a new database, keeping its owner and mode), nor as a symbolic link (which would send the
    /// copy, every app's data, where the link points); nor may SQLite's companion files exist.
    static func createNewFile(_ path: String) throws {
        for companion in ["-wal", "-shm", "-journal"] {
            var status = stat()
            if lstat(path + companion, &status) == 0 {
                throw UsageError(
                    "\(TerminalText.escaped(path + companion)) exists: copy makes a new SQLite file, "
                        + "and SQLite would use it; remove it, or name another target (--to)")
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason =
                errno == EEXIST
                ? "it exists (as a file or a symbolic link): copy makes a new SQLite file; remove it, or name another target"
                : String(cString: strerror(errno))
            throw UsageError("cannot create \(TerminalText.escaped(path)) (--to): \(reason)")
        }
        close(descriptor)
    }

    func run() throws {
        let source = try StoreEngine(db: from).open()
        defer { try? source.close() }
        if case .sqlite(let path) = StoreEngine(db: to) { try Self.createNewFile(path) }
        let target = try StoreEngine(db: to).open()
        defer { try? target.close() }
        var lastSaid = ContinuousClock.now
        let started = lastSaid
        let tally: CopyTally
        do {
            tally = try StoreCopy.run(from: source, to: target) { tally in
                guard ContinuousClock.now - lastSaid >= .seconds(2) else { return }
                lastSaid = .now
                var said = "pushtrace: copied \(tally.bundles) of \(tally.bundlesInSource) bundles (\(tally.blocks) record blocks)"
                if let table = tally.table { said += ", then \(tally.rowsCopied) rows (now \(table))" }
                printError(said)
            }
        } catch let error as StoreError where error.code.isCopy {
            throw UsageError(error.description)
        }
        let took = (ContinuousClock.now - started).components
        let seconds = Double(took.seconds) + Double(took.attoseconds) / 1e18
        print("Copied \(source.location) to \(target.location) in \(String(format: "%.1f", seconds)) s:")
        for table in StoreCopy.countedTables {
            print("  \(table.padding(toLength: 16, withPad: " ", startingAt: 0)) \(tally.rows[table] ?? 0) rows, the same in both")
        }
        if tally.unreadableBlocks > 0 {
            print(
                "  \(tally.unreadableBlocks) record blocks could not be read back (copied as they are, unindexed): "
                    + "pushtrace check --db \(TerminalText.escaped(source.location)) counts them")
        }
    }
}
