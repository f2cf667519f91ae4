/// One NDJSON line (without its newline), its keys in the order given: how the agent and the simulator write records.
///
/// Hand-written rather than `JSONEncoder`: the agent writes a line on every step of a notification inside an
/// extension with a few milliseconds to spare, and this costs a fraction of a general encoder (no reflection, no
/// intermediate containers). Fields whose value is nil are left out.
public struct JSONLine: Sendable {
    /// The line as UTF-8 bytes, `{` to `}`.
    public private(set) var bytes: [UInt8] = Array("{}".utf8)

    public init(_ pairs: KeyValuePairs<String, JSONValue?>) {
        self.init(fields: pairs.map { ($0.key, $0.value) })
    }

    public init(fields: [(String, JSONValue?)]) {
        bytes.reserveCapacity(160)
        for (key, value) in fields {
            if let value { append(key: key, value) }
        }
    }

    /// The line as a string.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Adds a member before the closing brace.
    public mutating func append(key: String, _ value: JSONValue) {
        bytes.removeLast()  // the closing brace
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        Self.quote(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.encode(value, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// A value's JSON text.
    public static func encode(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        encode(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func encode(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .int(let i): out += String(i).utf8
        case .double(let d): out += (d.isFinite ? String(d) : "null").utf8
        case .string(let s): quote(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                encode(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                quote(key, into: &out)
                out.append(UInt8(ascii: ":"))
                encode(members[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case UInt8(ascii: "\n"): out += #"\n"#.utf8
            case UInt8(ascii: "\r"): out += #"\r"#.utf8
            case UInt8(ascii: "\t"): out += #"\t"#.utf8
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
