import Foundation
import PushTraceRecords

/// Turns one NDJSON line into a manifest or a validated record, with a reason a developer can act on when it is not.
struct LineParser {
    private let decoder = JSONDecoder()

    /// The earliest plausible `ts`: 1e11 ms is March 1973, while 1e11 s would be the year 5138,
    /// so a smaller value is a timestamp in seconds.
    static let smallestMilliseconds: Int64 = 100_000_000_000

    func manifest(_ line: ArraySlice<UInt8>, number: Int) throws(BundleError) -> Manifest {
        let text = try utf8(line).manifestText(line: number)
        let manifest: Manifest
        do {
            manifest = try line.withUnsafeBytes(Manifest.init(scanning:)) ?? decoder.decode(Manifest.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw BundleError(.undecodable, line: number, "the manifest \(Self.describe(error, line: line))")
        } catch {
            throw BundleError(.undecodable, line: number, "the manifest is not valid JSON")
        }
        guard manifest.type == RecordType.manifest.rawValue else {
            let found = manifest.type.map { "a `\($0)` record" } ?? "a line without `type`"
            throw BundleError(.undecodable, line: number,
                              "expected the manifest ({\"type\":\"manifest\",…}) as the first line, found \(found)")
        }
        for (value, name) in [(manifest.appID, "app_id"), (manifest.bundleID, "bundle_id")] {
            guard let value else { throw BundleError(.undecodable, line: number, "the manifest lacks `\(name)`") }
            guard !value.isEmpty else { throw BundleError(.undecodable, line: number, "the manifest's `\(name)` is empty") }
        }
        if let uploadedAt = manifest.uploadedAt, let why = Self.checkMilliseconds(uploadedAt, field: "uploaded_at") {
            throw BundleError(.undecodable, line: number, "the manifest's \(why)")
        }
        return manifest
    }

    /// A record, or the reason the line is rejected.
    func record(_ line: ArraySlice<UInt8>, number: Int) -> Result<DecodedRecord, RejectedLine> {
        let text: String
        switch utf8(line) {
        case .success(let t): text = t
        case .failure(let why): return .failure(RejectedLine(line: number, raw: Array(line), reason: why.message))
        }
        let record: Record
        do {
            // Most lines are read in one pass; the rest (config records, anything unusual) by the strict decoder.
            record = try line.withUnsafeBytes(Record.init(scanning:)) ?? decoder.decode(Record.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            return .failure(RejectedLine(line: number, raw: Array(line), reason: Self.describe(error, line: line)))
        } catch {
            return .failure(RejectedLine(line: number, raw: Array(line), reason: "not valid JSON"))
        }
        if let why = Self.validate(record) {
            return .failure(RejectedLine(line: number, raw: Array(line), reason: why))
        }
        return .success(DecodedRecord(line: number, record: record,
                                      notificationID: record.notificationID.map(NotificationKey.normalize),
                                      json: text))
    }

    /// The missing or malformed fields of a decoded record, or nil when it may be stored.
    static func validate(_ record: Record) -> String? {
        guard let type = record.type else { return "lacks `type` (event, log or config)" }
        var required: [Record.CodingKeys]
        switch RecordType(rawValue: type) {
        case .manifest: return "a second manifest: the manifest belongs on the first line only"
        case .event:
            required = [.ts, .process, .event, .notificationID]
            if let event = record.eventName { required += EventName.requiredFields[event] ?? [] }
        case .log: required = [.ts, .process, .level, .message]
        case .config: required = [.ts, .process]
        case nil: required = [] // A newer kind of record: kept as it is.
        }
        let missing = required.filter { !record.has($0) }
        if !missing.isEmpty {
            let what = record.event.map { "`\($0)` " } ?? "a \(type) record "
            return what + "lacks " + missing.map { "`\($0.rawValue)`" }.joined(separator: ", ")
        }
        if let ts = record.ts, let why = checkMilliseconds(ts, field: "ts") { return why }
        if let process = record.process, ProcessKind(rawValue: process) == nil {
            return "`process` is \"\(process)\"; it must be one of app, service, content, server"
        }
        if record.notificationID == "" { return "`notification_id` is empty" }
        if let response = record.response, record.eventName == .contentAction, ResponseOption(rawValue: response) == nil {
            return "`response` is \"\(response)\"; it must be doNotDismiss, dismiss or dismissAndForwardAction"
        }
        return nil
    }

    static func checkMilliseconds(_ value: Int64, field: String) -> String? {
        if value < 0 { return "`\(field)` is negative (\(value)); it must be Unix epoch milliseconds" }
        if value < smallestMilliseconds {
            return "`\(field)` \(value) looks like seconds, not milliseconds: "
                + "it must be Unix epoch milliseconds (\(value * 1000)?)"
        }
        return nil
    }

    private func utf8(_ line: ArraySlice<UInt8>) -> Result<String, BundleError> {
        if let text = String(validating: line, as: UTF8.self) { return .success(text) }
        let offset = Self.firstInvalidUTF8Offset(line)
        return .failure(BundleError(.undecodable, "invalid UTF-8 at byte \(offset + 1) of the line"))
    }

    private static func firstInvalidUTF8Offset(_ line: ArraySlice<UInt8>) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = line.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput, .error: return offset
            }
        }
    }

    /// A sentence for a decoding error, naming the field.
    static func describe(_ error: DecodingError, line: ArraySlice<UInt8>) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(_, let context) where context.codingPath.isEmpty:
            return "is \(jsonKind(of: line)), not a JSON object"
        case .typeMismatch(let type, let context):
            return "field `\(path(context))` must be \(expected(type))"
        case .valueNotFound(let type, let context):
            return "field `\(path(context))` is null; it must be \(expected(type))"
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "lacks `\(parent.isEmpty ? "" : parent + ".")\(key.stringValue)`"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "is not valid JSON" }
            return "field `\(path(context))` is malformed"
        @unknown default:
            return "is not a valid record"
        }
    }

    private static func expected(_ type: Any.Type) -> String {
        switch type {
        case is Int64.Type, is Int.Type: return "an integer"
        case is Bool.Type: return "a boolean (true or false)"
        case is String.Type: return "a string"
        case is Double.Type: return "a number"
        default:
            return String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }

    private static func jsonKind(of line: ArraySlice<UInt8>) -> String {
        switch line.first(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) {
        case UInt8(ascii: "["): return "a JSON array"
        case UInt8(ascii: "\""): return "a JSON string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a JSON boolean"
        case UInt8(ascii: "n"): return "JSON null"
        default: return "a JSON number"
        }
    }
}

private extension Result where Failure == BundleError {
    /// The manifest line's text, or its UTF-8 error as a whole-bundle failure at `line`.
    func manifestText(line: Int) throws(BundleError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(var error):
            error.line = line
            error.message = "the manifest has " + error.message
            throw error
        }
    }
}
