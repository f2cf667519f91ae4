import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

@Suite("The one-pass record reader agrees with JSONDecoder")
struct RecordScanningTests {
    private static func scanned(_ line: String) -> Record? {
        Array(line.utf8).withUnsafeBytes { Record(scanning: $0) }
    }

    @Test("every record line of a simulated corpus: the same record, every one read in one pass")
    func simulatedCorpus() throws {
        var lines = 0, taken = 0
        for record in try ScanningSupport.simulatedRecords(seed: 3, notifications: 400) {
            lines += 1
            guard let scanned = Self.scanned(record.json) else { continue }
            taken += 1
            #expect(scanned == ScanningSupport.strict(Record.self, record.json), "line: \(record.json)")
        }
        #expect(lines > 3_000)
        #expect(taken == lines, "\(taken) of \(lines) lines read in one pass")
    }

    @Test("a record's time read alone is the whole record's, or left to the full reader")
    func timestampAlone() throws {
        func alone(_ line: String) -> Int64?? { Array(line.utf8).withUnsafeBytes { Record.timestamp(scanning: $0) } }
        let lines = try ScanningSupport.simulatedRecords(seed: 5, notifications: 100).map(\.json)
        #expect(lines.count > 1_000)
        for line in lines {
            #expect(alone(line) == .some(ScanningSupport.strict(Record.self, line)!.ts), "line: \(line)")
        }
        // Another field of the wrong type or written twice (the whole-record scanner leaves such lines to the full
        // readers): the time alone is still read.
        #expect(alone(#"{"ts":5,"status":"200","event":"a","event":"b"}"#) == .some(5))
        #expect(alone(#"{"type":"log","message":"no time"}"#) == .some(nil))
        #expect(alone(#"{"ts":null}"#) == .some(nil))
        // Left to the full reader: what it reads leniently or refuses, and escaped keys.
        for line in [#"{"ts":1,"ts":2}"#, #"{"ts":1.0}"#, #"{"ts":"1"}"#, #"{"t\u0073":1}"#, #"{"ts":1,}"#, "[1]", ""] {
            #expect(alone(line) == nil, "taken: \(line)")
        }
    }

    @Test("lines it takes: escapes, surrogate pairs, nulls, unknown nested fields, spaces")
    func taken() {
        let lines = [
            #"{"type":"log","ts":1794787200000,"process":"service","level":"info","message":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t"}"#,
            #"{"type":"event","ts":1794787200000,"process":"app","event":"app.opened","notification_id":"A-1","error":null,"extra":{"a":[1,2.5e-3,true,null,"x"]}}"#,
            #"  { "type" : "event" , "ts" : -5 , "ok" : false , "found" : true }  "#,
            "{}",
            // Config records' nested fields.
            #"{"type":"config","ts":1794787200000,"process":"app","categories":[{"actions":["READ","SHARE"],"id":"NEWS"},{"id":"DIGEST","actions":null,"x":{"y":[1]}},{"id":"EMPTY","actions":[]}]}"#,
            #"{"type":"config","ts":1794787200000,"process":"content","categories":[],"info_plist":{"UNNotificationExtensionCategory":"NEWS","UNNotificationExtensionInitialContentSizeRatio":0.5,"UNNotificationExtensionDefaultContentHidden":true,"UNNotificationExtensionUserInteractionEnabled":false,"NSExtensionPrincipalClass":"X"}}"#,
            #"{"type":"config","info_plist":{"UNNotificationExtensionCategory":["A","B"],"UNNotificationExtensionInitialContentSizeRatio":1}}"#,
            #"{"type":"config","info_plist":{"UNNotificationExtensionCategory":null,"UNNotificationExtensionInitialContentSizeRatio":-0.25},"categories":null}"#,
            #"{"type":"config","info_plist":{}}"#,
        ]
        for line in lines {
            let scanned = Self.scanned(line)
            #expect(scanned != nil, "not taken: \(line)")
            #expect(scanned == ScanningSupport.strict(Record.self, line), "line: \(line)")
        }
    }

    @Test("lines it leaves to the strict decoder, which answers them as before")
    func leftAside() {
        let lines = [
            #"{"ts":1,"ts":2}"#,  // a known key twice
            #"{"ts":1.0}"#, #"{"ts":1e3}"#, #"{"ts":-0}"#, #"{"ts":01}"#,  // numbers JSONDecoder reads leniently
            #"{"ts":9223372036854775808}"#,  // past Int64
            #"{"ts":"1794787200000"}"#,  // a known field of the wrong type
            // Config records' nested fields the strict decoder reads, or refuses, on its own terms.
            #"{"categories":[{"actions":["A"]}]}"#, #"{"categories":[{"id":null}]}"#,  // no category id
            #"{"categories":{"id":"A"}}"#, #"{"categories":[null]}"#, #"{"categories":["A"]}"#,
            #"{"categories":[{"id":"A","actions":[1]}]}"#, #"{"categories":[{"id":"A","id":"B"}]}"#,
            #"{"categories":[{"\u0069d":"A"}]}"#, #"{"categories":[{"id":"A"},]}"#,
            #"{"info_plist":{"UNNotificationExtensionInitialContentSizeRatio":1e-1}}"#,
            #"{"info_plist":{"UNNotificationExtensionInitialContentSizeRatio":"0.5"}}"#,
            #"{"info_plist":{"UNNotificationExtensionInitialContentSizeRatio":0.12345678901234567}}"#,
            #"{"info_plist":{"UNNotificationExtensionCategory":7}}"#, #"{"info_plist":[]}"#,
            #"{"info_plist":{"UNNotificationExtensionDefaultContentHidden":1}}"#,
            #"{"t\u0079pe":"event"}"#,  // an escaped key
            #"{"ts":1,}"#, #"{"x":-,"ts":1}"#, #"{"x":01,"ts":1}"#,  // malformed JSON JSONDecoder passes over
            "{\"message\":\"a\u{01}b\"}",  // a raw control character
            #"{"message":"\ud800"}"#, #"{"x":"\udc00x"}"#,  // lone surrogates
            #"{"ts":1} x"#, "[1]", "\"text\"", "",  // not one object
        ]
        for line in lines {
            #expect(Self.scanned(line) == nil, "taken: \(line)")
        }
        // Invalid UTF-8 inside a string (the server validates lines first; the fuzzer does not).
        let invalid = Array(#"{"message":"a"#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(invalid.withUnsafeBytes { Record(scanning: $0) } == nil)
        // ... and in a field passed over (JSONDecoder refuses the whole line; found by the fuzzer).
        let passedOver = Array(#"{"x":"a"#.utf8) + [0xD8] + Array(#"","ts":1794787200000}"#.utf8)
        #expect(passedOver.withUnsafeBytes { Record(scanning: $0) } == nil)
    }
}
