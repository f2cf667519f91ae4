import Foundation
import PushTraceGzip
import PushTraceRecords
import Testing

@Suite("The one-pass manifest reader agrees with JSONDecoder")
struct ManifestScanningTests {
    private static func scanned(_ line: String) -> Manifest? {
        Array(line.utf8).withUnsafeBytes { Manifest(scanning: $0) }
    }

    @Test("every manifest of a simulated corpus: the same manifest, every one read in one pass")
    func simulatedCorpus() throws {
        var manifests = 0
        for (file, bytes) in try ScanningSupport.simulatedFiles(seed: 5, notifications: 200) {
            let plain = file.hasSuffix(".gz") ? try Self.gunzip(bytes) : bytes
            let first = plain.split(separator: UInt8(ascii: "\n"), maxSplits: 1).first
            let line = String(decoding: try #require(first), as: UTF8.self)
            manifests += 1
            let scanned = try #require(Self.scanned(line), "not read in one pass: \(line)")
            #expect(scanned == ScanningSupport.strict(Manifest.self, line), "line: \(line)")
        }
        #expect(manifests > 100)
    }

    @Test("manifests it takes: every field, nulls, unknown nested fields, escapes, spaces")
    func taken() {
        let lines = [
            #"{"type":"manifest","schema":1,"bundle_id":"b-1","app_id":"net.rorklab.dailypick","app_version":"2.4.1","build":"812","os":"iOS 18.1","device_model":"iPhone16,1","device_id":"d-1","uploaded_at":1794787200000,"sdk":"pushtrace-agent 1.0"}"#,
            #"{"type":"manifest","bundle_id":"b-2","app_id":"a","device_id":null,"sdk":null,"extra":{"nested":[1,2.5e3,null,"x"]}}"#,
            #" { "app_id" : "caf\u00e9 \ud83d\ude00" , "bundle_id" : "b\/3" , "schema" : -2 } "#,
            "{}",
        ]
        for line in lines {
            let scanned = Self.scanned(line)
            #expect(scanned != nil, "not taken: \(line)")
            #expect(scanned == ScanningSupport.strict(Manifest.self, line), "line: \(line)")
        }
    }

    @Test("manifests it leaves to the strict decoder")
    func leftAside() {
        let lines = [
            #"{"app_id":"a","app_id":"b"}"#,  // a known key twice
            #"{"schema":1.0}"#, #"{"uploaded_at":1e12}"#, #"{"schema":01}"#,  // numbers JSONDecoder reads leniently
            #"{"schema":"1"}"#, #"{"app_id":7}"#, #"{"device_id":true}"#,  // a known field of another type
            #"{"\u0061pp_id":"a"}"#,  // an escaped key
            #"{"app_id":"a",}"#, #"{"app_id":"\ud800"}"#,  // malformed JSON, a lone surrogate
            #"{"app_id":"a"} x"#, "[1]", "",  // not one object
        ]
        for line in lines {
            #expect(Self.scanned(line) == nil, "taken: \(line)")
        }
    }

    private static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        var plain: [UInt8] = []
        let inflater = try Inflater(format: .gzip)
        try bytes.withUnsafeBytes { try inflater.consume($0) { plain.append(contentsOf: $0) } }
        return plain
    }
}
