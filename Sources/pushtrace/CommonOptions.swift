import ArgumentParser
import Foundation
import PushTraceStore

/// `--db`, shared by every command that reads or writes data.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The SQLite database file.", valueName: "path"))
    var db = "pushtrace.sqlite"

    /// Opens the store for a command that only reads: the file must exist.
    func existingStore() throws -> Store {
        guard FileManager.default.fileExists(atPath: db) else {
            throw UsageError("no database at \(db): ingest bundles first (pushtrace ingest --db \(db) FILE…)")
        }
        return try Store(path: db)
    }
}

/// `--format`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// Instants on the command line: `2026-11-10`, `2026-11-10T08:30:00Z`, or epoch milliseconds.
enum Instant {
    static func parse(_ text: String, option: String) throws -> Int64 {
        if let ms = Int64(text) { return ms }
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for formatter in [full, fractional, day] {
            if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        throw UsageError("\(option) \"\(text)\" is not a date: use 2026-11-10, 2026-11-10T08:30:00Z or epoch milliseconds")
    }

    static func format(_ ms: Int64?) -> String {
        guard let ms else { return "-" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate,
                                   .withSpaceBetweenDateAndTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// Prints to standard error (progress and diagnostics, never the answer).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
