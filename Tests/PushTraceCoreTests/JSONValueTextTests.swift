import Foundation
import PushTraceCore
import PushTraceRecords
import Testing

@Suite("JSON text of a JSONValue is JSONEncoder's, byte for byte")
struct JSONValueTextTests {
    private static func encoded(_ value: JSONValue, pretty: Bool) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty
            ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A deterministic generator (SplitMix64), so a failure names a seed that reproduces it.
    private struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    private static let pieces = [
        "a", "B", "z", "_", "1", "10", "9", "é", "e\u{301}", "ü", "😀", " ", "/", "\"", "\\",
        "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{1}", "\u{1f}", "\u{7f}", "\u{2028}", "key", "",
    ]
    private static let doubles: [Double] = [
        0.66, 2.5, -0.0, 1e21, 1e-7, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, 1e16,
        123456789.123, -3.75,
    ]

    private static func string(_ g: inout Generator) -> String {
        (0..<g.below(5)).map { _ in pieces[g.below(pieces.count)] }.joined()
    }

    private static func value(_ g: inout Generator, depth: Int) -> JSONValue {
        switch g.below(depth > 3 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(g.below(2) == 0)
        case 2: return .int([0, -1, 42, Int64.max, Int64.min, 1_763_622_000_000][g.below(6)])
        case 3: return .double(doubles[g.below(doubles.count)])
        case 4, 5: return .string(string(&g))
        case 6: return .array((0..<g.below(4)).map { _ in value(&g, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<g.below(6) { members[string(&g)] = value(&g, depth: depth + 1) }
            return .object(members)
        }
    }

    @Test("random documents, compact and pretty")
    func random() throws {
        for seed in 0..<2_000 as Range<UInt64> {
            var g = Generator(state: seed)
            let document = Self.value(&g, depth: 0)
            for pretty in [false, true] {
                #expect(
                    document.sortedJSONText(pretty: pretty) == (try Self.encoded(document, pretty: pretty)),
                    "seed \(seed), pretty \(pretty)")
            }
        }
    }

    @Test("empty containers, nested and at the top")
    func empty() throws {
        let documents: [JSONValue] = [
            .object([:]), .array([]), .object(["a": .array([]), "b": .object([:])]),
            .array([.array([]), .object([:])]),
        ]
        for document in documents {
            for pretty in [false, true] {
                #expect(document.sortedJSONText(pretty: pretty) == (try Self.encoded(document, pretty: pretty)))
            }
        }
    }
}

@Suite("A flat JSON object read in one pass is JSONDecoder's JSONValue")
struct JSONValueScanningTests {
    private static func flat(_ line: String) -> JSONValue? {
        Array(line.utf8).withUnsafeBytes { JSONValue(scanningFlatObject: $0) }
    }

    private static func strict(_ line: String) -> JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) }

    @Test("every record line of a simulated corpus but config lines: read in one pass, the same value")
    func simulatedCorpus() throws {
        var lines = 0, taken = 0
        for record in try ScanningSupport.simulatedRecords(seed: 7, notifications: 100) {
            lines += 1
            let flat = Self.flat(record.json), isConfig = record.record.recordType == .config
            if let flat {
                taken += 1
                #expect(flat == Self.strict(record.json), "line: \(record.json)")
            }
            #expect(flat != nil || isConfig, "not taken: \(record.json)")
        }
        #expect(lines > 1_000 && taken > lines / 2)
    }

    @Test("lines it takes, and lines it leaves to JSONDecoder")
    func edges() {
        let taken = [
            #"{"type":"log","ts":1794787200000,"message":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t","ok":true,"x":null}"#,
            #"  { "a" : -5 , "b" : false , "c\u0041" : "" }  "#, "{}", #"{"n":9223372036854775807,"m":-9223372036854775807}"#,
        ]
        for line in taken {
            #expect(Self.flat(line) != nil, "not taken: \(line)")
            #expect(Self.flat(line) == Self.strict(line), "line: \(line)")
        }
        let left = [
            #"{"a":1,"a":2}"#, #"{"a":1.5}"#, #"{"a":1e3}"#, #"{"a":-0}"#, #"{"a":01}"#, #"{"a":[1]}"#,
            #"{"a":{"b":1}}"#, #"{"a":9223372036854775808}"#, #"{"a":1,}"#, #"{"a":"\ud800"}"#, "[1]", "",
            #"{"a":1} x"#, "{\"a\":\"\u{01}\"}", #"{"a":tru}"#,
            #"{"m":-9223372036854775808}"#,
        ]  // Int64.min: the one-pass reader's integers stop one short
        for line in left {
            #expect(Self.flat(line) == nil, "taken: \(line)")
        }
    }
}
