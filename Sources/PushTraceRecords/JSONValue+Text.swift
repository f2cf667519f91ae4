import Foundation

extension JSONValue {
    /// The value as JSON text, byte for byte what `JSONEncoder` writes with `.sortedKeys` and
    /// `.withoutEscapingSlashes` (and `.prettyPrinted` when `pretty`), written directly: the generic encoder was a
    /// large share of answering `why`. Numbers other than integers are still written by `JSONEncoder`, whose
    /// formatting of doubles is its own.
    public func sortedJSONText(pretty: Bool) -> String {
        var writer = JSONTextWriter(pretty: pretty)
        writer.write(self, indent: 0)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

private struct JSONTextWriter {
    let pretty: Bool
    var bytes: [UInt8] = []

    init(pretty: Bool) {
        self.pretty = pretty
        bytes.reserveCapacity(1024)
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .int(let i): append(String(i))
        case .double(let d): append(Self.text(of: d))
        case .string(let s): write(string: s)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(element, indent: indent + 1)
            }
            close(UInt8(ascii: "]"), indent: indent, empty: elements.isEmpty)
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(string: member.key)
                append(pretty ? " : " : ":")
                write(member.value, indent: indent + 1)
            }
            close(UInt8(ascii: "}"), indent: indent, empty: members.isEmpty)
        }
    }

    /// A pretty container ends on a line of its own; an empty one is an empty line between its brackets.
    private mutating func close(_ bracket: UInt8, indent: Int, empty: Bool) {
        if pretty {
            if empty { bytes.append(UInt8(ascii: "\n")) }
            newline(indent)
        }
        bytes.append(bracket)
    }

    private mutating func newline(_ indent: Int) {
        guard pretty else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    private mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A string with the escapes `JSONEncoder` writes: quote, backslash, the short forms of five control
    /// characters, `\u00XX` for the other control characters; everything else as it is.
    private mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20:
                append("\\u00")
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func text(of double: Double) -> String {
        let encoder = JSONEncoder()
        return (try? String(decoding: encoder.encode(double), as: UTF8.self)) ?? "null"
    }
}

extension JSONValue {
    /// A JSON object whose members are all strings, integers, booleans or `null`, read in one pass exactly as
    /// `JSONDecoder` reads it into a `JSONValue`; nil to leave anything else to `JSONDecoder` (nested values, numbers
    /// with a fraction or an exponent, a key written twice, malformed text). Record lines are such objects, and
    /// the generic decoder was a large share of answering `why`.
    public init?(scanningFlatObject bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var s = FlatJSONScanner(base: base, end: bytes.count)
        var members: [String: JSONValue] = [:]
        s.skipSpace()
        guard s.take(.openBrace) else { return nil }
        s.skipSpace()
        if !s.take(.closeBrace) {
            while true {
                var key: String?
                guard s.text(into: &key), let key, members[key] == nil else { return nil }
                s.skipSpace()
                guard s.take(.colon) else { return nil }
                s.skipSpace()
                var text: String?, integer: Int64?, boolean: Bool?
                if s.peek(.quote) {
                    guard s.text(into: &text), let text else { return nil }
                    members[key] = .string(text)
                } else if s.takeLiteral(.null) {
                    members[key] = .null
                } else if s.peek(UInt8(ascii: "t")) || s.peek(UInt8(ascii: "f")) {
                    guard s.boolean(into: &boolean), let boolean else { return nil }
                    members[key] = .bool(boolean)
                } else {
                    guard s.integer(into: &integer), let integer else { return nil }
                    members[key] = .int(integer)
                }
                s.skipSpace()
                if s.take(.closeBrace) { break }
                guard s.take(.comma) else { return nil }
                s.skipSpace()
            }
        }
        s.skipSpace()
        guard s.atEnd else { return nil }
        self = .object(members)
    }
}
