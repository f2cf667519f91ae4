import PushTraceGzip
import Testing

/// The compressed blocks the store keeps its records in, read back from damaged or foreign bytes.
@Suite("Gzip: line blocks")
struct LineBlockTests {
    static let lines = [
        #"{"type":"event","ts":1763622001000,"process":"service","event":"service.received","notification_id":"n-1"}"#,
        #"{"type":"log","ts":1763622001001,"process":"service","level":"info","message":"é  "}"#, "",
    ]
    static let dictionary = Array(#"{"type":"event","process":"service","event":"service.delivered"}"#.utf8)
    static func known(_ id: UInt32) -> [UInt8]? { id == DictionaryDeflate.identifier(of: dictionary) ? dictionary : nil }

    @Test("a block decodes to its lines exactly, with its dictionary and without one")
    func roundTrip() throws {
        for dictionary in [Self.dictionary, []] {
            let block = LineBlock.compress(Self.lines, dictionary: dictionary, level: 6)
            #expect(try LineBlock.decode(block.data, lines: 3, rawBytes: block.rawBytes, dictionaries: Self.known) == Self.lines)
        }
        let empty = LineBlock.compress([], dictionary: Self.dictionary, level: 6)
        #expect(try LineBlock.decode(empty.data, lines: 0, rawBytes: 0, dictionaries: Self.known) == [])
    }

    @Test("damage, another dictionary, other counts than declared, and a bomb are refused, each said")
    func refusals() throws {
        let block = LineBlock.compress(Self.lines, dictionary: Self.dictionary, level: 6)
        func decode(
            _ data: [UInt8], lines: Int = 3, rawBytes: Int? = nil,
            dictionaries: (UInt32) -> [UInt8]? = LineBlockTests.known
        ) -> LineBlockError? {
            do {
                _ = try LineBlock.decode(data, lines: lines, rawBytes: rawBytes ?? block.rawBytes, dictionaries: dictionaries)
                return nil
            } catch { return error }
        }
        #expect(decode(Array(block.data.prefix(block.data.count / 2))) == .compression(.truncated))
        #expect(
            decode(block.data, dictionaries: { _ in nil })
                == .compression(
                    .corrupt(
                        "compressed against an unknown dictionary \(DictionaryDeflate.identifier(of: Self.dictionary))")))
        // Another dictionary under the same name: the data refers to bytes it does not hold, or the checksum fails.
        let another = decode(block.data, dictionaries: { _ in Array("another".utf8) })
        #expect({ if case .compression(.corrupt)? = another { true } else { false } }(), "\(String(describing: another))")
        let otherLines = decode(block.data, dictionaries: { _ in Array(#"{"type":"log","process":"content","event":"x"}"#.utf8) })
        #expect({ if case .compression(.corrupt)? = otherLines { true } else { false } }(), "\(String(describing: otherLines))")
        #expect(decode(block.data, lines: 2) == .lineCount(expected: 2))
        #expect(decode(block.data, rawBytes: block.rawBytes - 1) == .compression(.tooLarge(limit: block.rawBytes - 1)))
        #expect(decode(block.data, rawBytes: block.rawBytes + 1) == .size(expected: block.rawBytes + 1, actual: block.rawBytes))
        #expect(decode(block.data + [1, 2, 3]) == .compression(.corrupt("3 bytes after the end of the stream")))
        #expect(decode(block.data, lines: -1) == .declared(lines: -1, bytes: block.rawBytes))
        // Four million newlines in a few kilobytes, declared as 100 bytes: stopped at the declared size.
        let bomb = [String](repeating: "", count: 4_000_000)
        let compressed = LineBlock.compress(bomb, dictionary: [], level: 9)
        #expect(compressed.data.count < 10_000)
        #expect(decode(compressed.data, lines: 2, rawBytes: 100) == .compression(.tooLarge(limit: 100)))
        #expect(decode([0x78, 0x9c, 0xff, 0xff]) != nil)
    }

    @Test("a stream of unknown size is read whole through a buffer that grows, and stopped at its bound")
    func growing() throws {
        // Four million bytes from a few kilobytes: the first guess of room is far too small.
        let bomb = LineBlock.compress([String](repeating: "", count: 4_000_000), dictionary: Self.dictionary, level: 9)
        let decoded = try bomb.data.withUnsafeBytes { input in
            try DictionaryDeflate.decompress(input, limit: Int(Int32.max), dictionary: Self.known)
        }
        #expect(decoded.count == bomb.rawBytes)
        #expect(decoded.allSatisfy { $0 == UInt8(ascii: "\n") })
        for limit in [bomb.rawBytes - 1, 1 << 20, 4096, 0] {
            #expect(throws: DictionaryDeflate.Failure.tooLarge(limit: limit)) {
                try bomb.data.withUnsafeBytes { try DictionaryDeflate.decompress($0, limit: limit, dictionary: Self.known) }
            }
        }
    }
}
