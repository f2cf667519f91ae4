import Foundation
import PushTraceFuzzing
import Testing

/// Every input a fuzzer ever failed on (`make fuzz` writes them; they are kept in FuzzCrashers/), replayed through
/// the fuzzers' own harness: a crash or a broken invariant here traps the test run.
@Suite("Core: fuzz crashers, replayed")
struct FuzzRegressionTests {
    static func inputs(_ target: String) throws -> [URL] {
        let folder = try #require(Bundle.module.url(forResource: "FuzzCrashers/\(target)", withExtension: nil))
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
    }

    @Test("each fuzzer's kept inputs run through its harness without a trap", arguments: ["bundle", "records", "block"])
    func replay(target: String) throws {
        let inputs = try Self.inputs(target)
        #expect(!inputs.isEmpty)
        for input in inputs {
            try Data(contentsOf: input).withUnsafeBytes { bytes in
                switch target {
                case "bundle": FuzzHarness.bundle(bytes)
                case "records": FuzzHarness.records(bytes)
                default: FuzzHarness.block(bytes)
                }
            }
        }
    }
}
