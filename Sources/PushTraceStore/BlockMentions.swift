import Foundation

/// What each line of a decoded block says its notification is, found once per block without parsing, so that
/// reading a notification's lines from a block of many (a backend's `push.sent` lines) parses only its own.
///
/// A line's mention is the value of its one `"notification_id":"…"` (ASCII letters folded to lower case, as a UUID
/// is compared), none when it has no such key, or undecided when only the parser can tell: an escape anywhere, the
/// key spelled otherwise (spaces) or repeated. A line the parser would give the notification is never left out.
package struct BlockMentions {
    package enum Mention: Equatable {
        case none
        case id([UInt8])
        case undecided
    }

    /// Line indices by a 64-bit hash of the folded ID they name: a candidate list (two IDs may share a hash), which
    /// callers narrow by each line's parsed ID. Hashing the bytes in place spares an array per line.
    private var byID: [UInt64: [Int]] = [:]
    private var undecided: [Int] = []

    package init(_ lines: [String]) {
        for (index, line) in lines.enumerated() {
            var line = line
            let found = line.withUTF8 { bytes -> UInt64?? in
                switch Self.value(in: bytes) {
                case .none: return .some(nil)
                case .undecided: return nil
                case .found(let range): return .some(Self.hash(UnsafeBufferPointer(rebasing: bytes[range])))
                }
            }
            switch found {
            case .none: undecided.append(index)
            case .some(nil): break
            case .some(.some(let hash)): byID[hash, default: []].append(index)
            }
        }
    }

    /// The lines that may be notification `folded`'s (see ``folded(_:)``), in order.
    package func lines(mentioning folded: [UInt8]) -> [Int] {
        let named = folded.withUnsafeBufferPointer { byID[Self.hash($0)] } ?? []
        return undecided.isEmpty ? named : (named + undecided).sorted()
    }

    /// `id` with ASCII letters in lower case.
    package static func folded(_ id: [UInt8]) -> [UInt8] { id.map(fold) }

    private static func fold(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte | 0x20 : byte }

    /// FNV-1a of `bytes` with ASCII letters folded to lower case.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(fold(byte))) &* 0x100_0000_01b3 }
        return hash
    }

    /// Whether `line` may be a record of the notification `needle`.
    package static func mayMention(_ line: String, _ needle: [UInt8]) -> Bool {
        switch mention(line) {
        case .none: false
        case .undecided: true
        case .id(let id): id == folded(needle)
        }
    }

    /// What `line` says its notification is.
    package static func mention(_ line: String) -> Mention {
        var line = line
        return line.withUTF8 { bytes in
            switch value(in: bytes) {
            case .none: .none
            case .undecided: .undecided
            case .found(let range): .id(folded(Array(bytes[range])))
            }
        }
    }

    private enum Value {
        case none
        case found(Range<Int>)
        case undecided
    }

    /// Where the line's one `"notification_id":"…"` value is, without parsing it.
    private static func value(in bytes: UnsafeBufferPointer<UInt8>) -> Value {
        guard let base = bytes.baseAddress else { return .none }
        if memchr(base, Int32(UInt8(ascii: "\\")), bytes.count) != nil { return .undecided }
        var firstValue: Int?, values = 0
        var from = 0
        while let found = find(key, in: bytes, from: from) {
            if firstValue == nil { firstValue = found + key.count }
            values += 1
            from = found + key.count
        }
        var bareKeys = 0
        from = 0
        while let found = find(bareKey, in: bytes, from: from) {
            bareKeys += 1
            from = found + bareKey.count
        }
        if bareKeys == 0 { return .none }
        guard values == 1, bareKeys == 1, let value = firstValue,
            let end = memchr(base + value, Int32(UInt8(ascii: "\"")), bytes.count - value)
        else { return .undecided }
        return .found(value..<base.distance(to: end.assumingMemoryBound(to: UInt8.self)))
    }

    /// The offset of the first `pattern` in `bytes` at or after `from`, found by `memchr` on its first byte.
    private static func find(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = pattern.first else { return nil }
        var at = from
        while at + pattern.count <= bytes.count,
            let hit = memchr(base + at, Int32(first), bytes.count - at - pattern.count + 1)
        {
            let offset = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if pattern.count == 1 || (base[offset + 1] == pattern[1] && memcmp(base + offset, pattern, pattern.count) == 0) {
                return offset
            }
            at = offset + 1
        }
        return nil
    }

    private static let key: [UInt8] = Array(#""notification_id":""#.utf8)
    private static let bareKey: [UInt8] = Array("notification_id".utf8)
}

/// A block's lines, and what each mentions once a notification's lines were looked for in it.
package final class DecodedBlock {
    package let lines: [String]
    package private(set) lazy var mentions = BlockMentions(lines)

    package init(_ lines: [String]) { self.lines = lines }
}
