import ArgumentParser
import Foundation
import PushTraceCore
import PushTraceRecords
import PushTraceStore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the stored records back as NDJSON, each line exactly as it was received.",
        discussion: """
            Every accepted line can be read back: the body of each line byte for byte, one per line, in the order \
            stored, with no manifest. Filters combine; times are the records' corrected times (UTC), half-open. \
            With --corrected, each line gains "corrected_ts", the time pushtrace stores it under (the device's \
            clock corrected by its bundle's offset). Memory stays the same however much is exported; on a terminal, \
            progress goes to stderr, and the lines show control characters escaped (\\e, \\u{202E}), as why does: \
            redirected to a file or a pipe, they are byte for byte.

            Exit status: 0; 1 when --notification names nothing stored; 2 for an --app of which nothing is stored.

            Examples:
              pushtrace export > everything.ndjson
              pushtrace export --app net.rorklab.dailypick --since 2026-11-17 --until 2026-11-18 | gzip > day.ndjson.gz
              pushtrace export --notification 6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10 --corrected
              pushtrace export --app net.rorklab.dailypick | sqlite-utils insert records.db records - --nl
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("Only this app.", valueName: "app-id")) var app: String?
    @Option(help: ArgumentHelp("Records at or after (2026-11-10, 2026-11-10T08:30:00Z, epoch ms).", valueName: "when"))
    var since: String?
    @Option(help: ArgumentHelp("Records before.", valueName: "when")) var until: String?
    @Option(help: ArgumentHelp("Only this notification's records.", valueName: "id")) var notification: String?
    @Flag(help: "Add \"corrected_ts\" to each line.") var corrected = false

    func validate() throws {
        if let notification, notification.isEmpty { throw ValidationError("--notification is empty") }
    }

    func run() async throws {
        let filter = ExportFilter(
            appID: app, since: try since.map { try Instant.parse($0, option: "--since") },
            until: try until.map { try Instant.parse($0, option: "--until") },
            notificationID: notification)
        if let since = filter.since, let until = filter.until, until <= since {
            throw UsageError("--until must be after --since")
        }
        let store = try database.existingStore()
        defer { database.close(store) }
        var output = LineOutput(escaping: isatty(STDOUT_FILENO) != 0)
        let progress = ExportProgress()
        try store.export(filter) { line in
            output.write(line.body, correctedTs: corrected ? line.correctedTs : nil)
            progress.count()
        }
        output.flush()
        progress.finish()
        if progress.lines == 0 {
            if let app { try await database.requireKnownApp(app, in: store) }
            if let notification {
                printError("nothing is stored for notification \(notification)")
                throw NegativeAnswer()
            }
        }
    }
}

/// Standard output, written in large pieces: an export is millions of short lines.
private struct LineOutput {
    private var buffer: [UInt8] = []
    /// On a terminal, a device's text must not act on it (move the cursor, set the title, reorder what follows).
    private let escaping: Bool

    init(escaping: Bool) {
        self.escaping = escaping
        buffer.reserveCapacity(1 << 18)
    }

    /// Appends `body` and a newline; with a time, `"corrected_ts"` goes in as the object's last member.
    mutating func write(_ body: String, correctedTs: Int64?) {
        var body = escaping ? TerminalText.escaped(body) : body
        body.withUTF8 { bytes in
            if let correctedTs, let close = bytes.lastIndex(of: UInt8(ascii: "}")) {
                buffer.append(contentsOf: bytes[..<close])
                let empty = bytes[..<close].allSatisfy { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: " ") }
                buffer.append(contentsOf: Array("\(empty ? "" : ",")\"corrected_ts\":\(correctedTs)".utf8))
                buffer.append(contentsOf: bytes[close...])
            } else {
                buffer.append(contentsOf: bytes)
            }
        }
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 18 { flush() }
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Lines exported so far, shown on stderr every few seconds when it is a terminal.
private final class ExportProgress {
    private(set) var lines = 0
    private let onTerminal = isatty(STDERR_FILENO) != 0
    private var last = Date()

    func count() {
        lines += 1
        guard onTerminal, lines % 10_000 == 0, Date().timeIntervalSince(last) >= 5 else { return }
        last = Date()
        FileHandle.standardError.write(Data("exported \(lines) lines…\n".utf8))
    }

    func finish() {
        if onTerminal { FileHandle.standardError.write(Data("exported \(lines) lines\n".utf8)) }
    }
}
