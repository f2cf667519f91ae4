import PushTraceRecords

/// Writes one NDJSON line with its keys in the given order (as an agent would write it).
struct JSONLine {
    private(set) var text = "{"

    init(_ pairs: KeyValuePairs<String, JSONValue?>) {
        self.init(fields: pairs.map { ($0.key, $0.value) })
    }

    init(fields: [(String, JSONValue?)]) {
        var first = true
        for (key, value) in fields {
            guard let value else { continue }
            text += (first ? "\"" : ",\"") + key + "\":" + Self.encode(value)
            first = false
        }
        text += "}"
    }

    static func encode(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return quote(s)
        case .array(let items): return "[" + items.map(encode).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { quote($0) + ":" + encode(members[$0]!) }.joined(separator: ",") + "}"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += "\\u" + String(scalar.value, radix: 16).leftPadded(4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

