import ArgumentParser
import Foundation
import PushTraceStore

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read every stored block back and recount it against the store's counts.",
        discussion: """
            Decompresses every record block and checks that each bundle's blocks hold the lines it accepted, \
            that the index finds every notification's blocks, and that each notification summary counts its \
            records (summaries a running server has not written yet are left out). It reads one consistent \
            moment, so a server may go on writing meanwhile. Exit status 0 when everything agrees, 1 when \
            something does not.

            Examples:
              pushtrace check
              pushtrace check --db /var/lib/pushtrace/pushtrace.sqlite --format json
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: "text or json.") var format: OutputFormat = .text

    func run() throws {
        let check = try database.withExistingStore { try $0.check() }
        switch format {
        case .text: print(check.description)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(check), as: UTF8.self))
        }
        if !check.isConsistent { throw ExitCode(1) }
    }
}
