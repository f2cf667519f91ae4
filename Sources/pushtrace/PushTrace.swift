import ArgumentParser
import Foundation
import PushTraceRecords
import PushTraceSQLite
import PushTraceStore

/// The `pushtrace` command: ingest log bundles, then ask why a notification's card did or did not show.
struct PushTrace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushtrace",
        abstract: "Push-notification observability for iOS apps: why did the rich notification not show?",
        discussion: """
            pushtrace correlates what the app, its Notification Service Extension and its Notification Content \
            Extension recorded about every push, per notification ID, in one SQLite file, or in a PostgreSQL database shared by several servers.

            A first session:
              pushtrace simulate --out bundles          # realistic bundles, all causes
              pushtrace ingest bundles                  # into ./pushtrace.sqlite
              pushtrace search --cause service_timeout  # which notifications timed out?
              pushtrace why 6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10
            """,
        version: versionText,
        subcommands: [
            Ingest.self, Why.self, Search.self, Logs.self, Report.self, Alerts.self, SQL.self, Simulate.self,
            Serve.self, TokenCommand.self, SendEvent.self, Lint.self, Vacuum.self, Export.self, Check.self, Copy.self,
        ])

    /// What `--version` prints: the release, the bundle format it reads (docs/protocol.md#bundles) and the store schema it writes.
    static let versionText =
        "pushtrace \(PushTraceVersion.release) (bundle schema \(PushTraceVersion.bundleSchema), "
        + "store schema \(SQLiteStore.schemaVersion))"
}

/// A bad argument or bad input: printed on stderr, exit status 2 (docs/spec.md §7).
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A negative answer the caller asked about (an unknown notification): exit status 1, output already printed.
struct NegativeAnswer: Error {}

@main
enum Main {
    static func main() async {
        SQLiteStore.applyProcessSettings()
        do {
            var command = try PushTrace.parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch  where error is UsageError || error is StoreError {  // StoreError: a --db not pushtrace's, or not usable.
            FileHandle.standardError.write(Data("pushtrace: \(error)\n".utf8))
            exit(2)
        } catch is NegativeAnswer {
            exit(1)
        } catch let code as ExitCode {
            exit(code.rawValue)  // The command has said what was wrong.
        } catch {
            let code = PushTrace.exitCode(for: error)
            if code == .success { PushTrace.exit(withError: error) }  // --help
            // Anything else is bad usage or bad input (docs/spec.md §7: exit status 2), said on stderr.
            FileHandle.standardError.write(Data("\(PushTrace.fullMessage(for: error))\n".utf8))
            exit(2)
        }
    }
}
