// The one-pass JSON reader behind `Record(scanning:)` and `Manifest(scanning:)`: it reads exactly what it is asked
// for and reports failure for anything else, so that its callers can leave such lines to `JSONDecoder`.

/// Where a string lies in the scanned bytes, between its quotes.
struct StringBounds {
    var start: Int
    var end: Int
    /// Whether it holds escapes (`\n`, `\u00e9`) still to resolve.
    var escaped: Bool
    /// Whether every byte is ASCII (so it is valid UTF-8 as it stands).
    var ascii: Bool
}

/// A strict, single-pass reader of one JSON text's bytes: every method either consumes exactly what it names and
/// returns success, or reports failure (after which the scan is abandoned).
struct FlatJSONScanner {
    let base: UnsafePointer<UInt8>
    let end: Int
    private var at = 0

    init(base: UnsafePointer<UInt8>, end: Int) {
        self.base = base
        self.end = end
    }

    var atEnd: Bool { at == end }

    /// How far the scan has come, in bytes.
    var position: Int { at }

    /// Whether the next byte is `byte` (nothing is consumed).
    func peek(_ byte: UInt8) -> Bool { at < end && base[at] == byte }

    mutating func skipSpace() {
        while at < end, base[at] == .space || base[at] == .newline || base[at] == .carriageReturn || base[at] == .tab {
            at += 1
        }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard at < end, base[at] == byte else { return false }
        at += 1
        return true
    }

    mutating func takeLiteral(_ literal: StaticString) -> Bool {
        let matches = literal.withUTF8Buffer { bytes in
            end - at >= bytes.count && bytes.indices.allSatisfy { base[at + $0] == bytes[$0] }
        }
        if matches { at += literal.utf8CodeUnitCount }
        return matches
    }

    /// A string's bytes between its quotes (escapes unresolved), whether it has escapes or bytes past ASCII (whose
    /// UTF-8 is then still to check), and the scan past it.
    mutating func string() -> StringBounds? {
        guard take(.quote) else { return nil }
        let start = at
        var escaped = false
        var ascii = true
        while at < end {
            let byte = base[at]
            if byte == .quote {
                at += 1
                return StringBounds(start: start, end: at - 1, escaped: escaped, ascii: ascii)
            }
            // JSON forbids raw control characters in strings.
            guard byte >= 0x20 else { return nil }
            guard byte == .backslash else {
                ascii = ascii && byte < 0x80
                at += 1
                continue
            }
            escaped = true
            guard at + 1 < end else { return nil }
            switch base[at + 1] {
            case .quote, .backslash, .slash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"),
                UInt8(ascii: "t"):
                at += 2
            case UInt8(ascii: "u"):
                guard hex4(at + 2) != nil else { return nil }
                at += 6
            default:
                return nil
            }
        }
        return nil
    }

    /// A string value, as a Swift string.
    mutating func text(into field: inout String?) -> Bool {
        guard let bounds = string(), let value = resolve(bounds) else { return false }
        field = value
        return true
    }

    /// An integer without fraction or exponent that fits `Int64` (anything else is left to the strict decoder).
    mutating func integer(into field: inout Int64?) -> Bool {
        let negative = take(.minus)
        let start = at
        var value: Int64 = 0
        while at < end, base[at] >= .zero, base[at] <= .nine {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(base[at] - .zero))
            guard !overflow1, !overflow2 else { return false }
            value = sum
            at += 1
        }
        let digits = at - start
        // No digits, a leading zero, `-0`, or a fraction or exponent following.
        guard digits > 0, digits == 1 || base[start] != .zero, !(negative && value == 0) else { return false }
        if at < end, base[at] == .dot || base[at] == UInt8(ascii: "e") || base[at] == UInt8(ascii: "E") { return false }
        field = negative ? -value : value
        return true
    }

    mutating func boolean(into field: inout Bool?) -> Bool {
        if takeLiteral("true") {
            field = true
        } else if takeLiteral("false") {
            field = false
        } else {
            return false
        }
        return true
    }

    /// Reads `bytes` as one JSON object and nothing else (spaces around it aside), as ``object(keys:depth:read:)``
    /// does; false for anything else.
    static func readObject(
        _ bytes: UnsafeRawBufferPointer, keys: [[UInt8]],
        read: (Int, inout FlatJSONScanner) -> Bool
    ) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        var scanner = FlatJSONScanner(base: base, end: bytes.count)
        scanner.skipSpace()
        guard scanner.object(keys: keys, depth: 0, read: read) else { return false }
        scanner.skipSpace()
        return scanner.atEnd
    }

    /// An object whose known `keys` (each at most once, unescaped) `read` takes by index unless `null`, and whose
    /// other members are passed over. `depth` is the object's nesting, which bounds what may be passed over.
    mutating func object(keys: [[UInt8]], depth: Int = 1, read: (Int, inout FlatJSONScanner) -> Bool) -> Bool {
        guard take(.openBrace) else { return false }
        skipSpace()
        if take(.closeBrace) { return true }
        var seen: UInt64 = 0
        while true {
            guard let name = string(), !name.escaped, name.ascii else { return false }
            skipSpace()
            guard take(.colon) else { return false }
            skipSpace()
            if let index = Self.index(of: name, in: keys, base: base) {
                guard seen & 1 << index == 0 else { return false }
                seen |= 1 << index
                if !takeLiteral(.null) {
                    guard read(index, &self) else { return false }
                }
            } else {
                guard skipValue(depth: depth) else { return false }
            }
            skipSpace()
            if take(.closeBrace) { return true }
            guard take(.comma) else { return false }
            skipSpace()
        }
    }

    /// The index in `keys` of the key between `name`'s bounds (lengths compared first: most keys differ in length).
    private static func index(of name: StringBounds, in keys: [[UInt8]], base: UnsafePointer<UInt8>) -> Int? {
        let count = name.end - name.start
        for (index, key) in keys.enumerated() where key.count == count {
            if key.withUnsafeBufferPointer({ $0.elementsEqual(UnsafeBufferPointer(start: base + name.start, count: count)) }) {
                return index
            }
        }
        return nil
    }

    /// Passes over one well-formed value of any kind.
    mutating func skipValue(depth: Int) -> Bool {
        guard at < end, depth < 32 else { return false }
        switch base[at] {
        case .quote:
            return skipString()
        case .openBrace:
            at += 1
            skipSpace()
            if take(.closeBrace) { return true }
            while true {
                guard skipString() else { return false }
                skipSpace()
                guard take(.colon) else { return false }
                skipSpace()
                guard skipValue(depth: depth + 1) else { return false }
                skipSpace()
                if take(.closeBrace) { return true }
                guard take(.comma) else { return false }
                skipSpace()
            }
        case .openBracket:
            at += 1
            skipSpace()
            if take(.closeBracket) { return true }
            while true {
                guard skipValue(depth: depth + 1) else { return false }
                skipSpace()
                if take(.closeBracket) { return true }
                guard take(.comma) else { return false }
                skipSpace()
            }
        case UInt8(ascii: "t"): return takeLiteral("true")
        case UInt8(ascii: "f"): return takeLiteral("false")
        case UInt8(ascii: "n"): return takeLiteral(.null)
        default: return number()
        }
    }

    /// Passes over a string the strict decoder would read too (valid UTF-8, no lone surrogate).
    private mutating func skipString() -> Bool {
        guard let bounds = string() else { return false }
        return (bounds.ascii && !bounds.escaped) || resolve(bounds) != nil
    }

    /// Passes over a number of JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func number() -> Bool {
        _ = take(.minus)
        guard at < end, base[at] >= .zero, base[at] <= .nine else { return false }
        if base[at] == .zero {
            at += 1
        } else {
            skipDigits()
        }
        if take(.dot) {
            guard at < end, base[at] >= .zero, base[at] <= .nine else { return false }
            skipDigits()
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(.plus) { _ = take(.minus) }
            guard at < end, base[at] >= .zero, base[at] <= .nine else { return false }
            skipDigits()
        }
        return true
    }

    private mutating func skipDigits() {
        while at < end, base[at] >= .zero, base[at] <= .nine { at += 1 }
    }

    private func hex4(_ position: Int) -> UInt32? {
        guard position + 4 <= end else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = base[position + offset]
            let digit: UInt8
            switch byte {
            case .zero ... .nine: digit = byte - .zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A string's value, escapes resolved; nil for invalid UTF-8 or a lone surrogate.
    private func resolve(_ bounds: StringBounds) -> String? {
        let raw = UnsafeBufferPointer(start: base + bounds.start, count: bounds.end - bounds.start)
        guard bounds.escaped else { return Self.validUTF8(raw) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = bounds.start
        while index < bounds.end {
            let byte = base[index]
            guard byte == .backslash else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escape = base[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(.newline)
            case UInt8(ascii: "r"): bytes.append(.carriageReturn)
            case UInt8(ascii: "t"): bytes.append(.tab)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(index) else { return nil }
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 6 <= bounds.end, base[index] == .backslash, base[index + 1] == UInt8(ascii: "u"),
                        let low = hex4(index + 2), (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                bytes.append(contentsOf: Unicode.UTF8.encode(unicode)!)
            default: bytes.append(escape)  // `"`, `\` and `/` stand for themselves.
            }
        }
        return bytes.withUnsafeBufferPointer(Self.validUTF8)
    }

    /// The string of `bytes`, or nil when they are not valid UTF-8 (`String(validating:)` needs iOS 18, and this
    /// module builds for the agent's older systems: a repaired string differs from its bytes).
    private static func validUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var string = String(decoding: bytes, as: UTF8.self)
        return string.withUTF8 { $0.elementsEqual(bytes) } ? string : nil
    }
}

/// JSON's punctuation, for the scanner and its readers.
extension UInt8 {
    static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), slash = UInt8(ascii: "/")
    static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    static let colon = UInt8(ascii: ":"), comma = UInt8(ascii: ","), dot = UInt8(ascii: ".")
    static let minus = UInt8(ascii: "-"), plus = UInt8(ascii: "+"), zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
    static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
}

extension StaticString {
    static let null: StaticString = "null"
}
