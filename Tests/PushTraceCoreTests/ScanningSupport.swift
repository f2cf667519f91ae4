import Foundation
import PushTraceCore
import PushTraceSimulator

/// What the one-pass reader suites share: the strict decoder's reading of a line, and a simulated corpus's files.
enum ScanningSupport {
    /// `JSONDecoder`'s reading of `line`, or nil where it refuses the line.
    static func strict<Value: Decodable>(_ type: Value.Type, _ line: String) -> Value? {
        try? JSONDecoder().decode(type, from: Data(line.utf8))
    }

    /// Every bundle file of a simulated corpus as written (gzip or plain NDJSON), with its name.
    static func simulatedFiles(seed: UInt64, notifications: Int) throws -> [(name: String, bytes: [UInt8])] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-scan-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Simulator.run(SimulationOptions(seed: seed, notifications: notifications), into: directory)
        let names = FileManager.default.enumerator(atPath: directory.path)!.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".ndjson") || $0.hasSuffix(".ndjson.gz") }
        return try names.map { ($0, try [UInt8](Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    /// Every record line of a simulated corpus's files, decoded as the server decodes an upload.
    static func simulatedRecords(seed: UInt64, notifications: Int) throws -> [DecodedRecord] {
        var records: [DecodedRecord] = []
        for (_, bytes) in try simulatedFiles(seed: seed, notifications: notifications) {
            let decoder = BundleDecoder(encoding: .sniff)
            let collect: (BundleItem) -> Void = { if case .record(let record) = $0 { records.append(record) } }
            try bytes.withUnsafeBytes { try decoder.consume($0, collect) }
            try decoder.finish(collect)
        }
        return records
    }
}
