import Foundation
import PushTraceRecords

/// Turns one NDJSON line into a manifest or a validated record, with a reason a developer can act on when it is not.
struct LineParser {
    private let decoder = JSONDecoder()

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
            let found = manifest.type.map { "a `\(TerminalText.escaped($0))` record" } ?? "a line without `type`"
            throw BundleError(
                .undecodable, line: number,
                "expected the manifest ({\"type\":\"manifest\",…}) as the first line, found \(found)")
        }
        for (value, name) in [(manifest.appID, "app_id"), (manifest.bundleID, "bundle_id")] {
            guard let value else { throw BundleError(.undecodable, line: number, "the manifest lacks `\(name)`") }
            guard !value.isEmpty else { throw BundleError(.undecodable, line: number, "the manifest's `\(name)` is empty") }
        }
        if let appID = manifest.appID, !WireBounds.isAppID(appID) {
            throw BundleError(
                .undecodable, line: number,
                "the manifest's `app_id` must be a bundle identifier: 1 to "
                    + "\(WireBounds.maxAppIDBytes) bytes of letters, digits, `.`, `-` and `_`")
        }
        for (value, name) in [(manifest.bundleID, "bundle_id"), (manifest.deviceID, "device_id")] {
            if let value, let why = WireBounds.identifierProblem(value) {
                throw BundleError(.undecodable, line: number, "the manifest's `\(name)` \(why)")
            }
        }
        for (value, name) in [
            (manifest.appVersion, "app_version"), (manifest.build, "build"), (manifest.os, "os"),
            (manifest.deviceModel, "device_model"), (manifest.sdk, "sdk"),
        ]
        where value?.unicodeScalars.contains("\u{0}") == true {
            throw BundleError(.undecodable, line: number, "the manifest's `\(name)` holds a NUL character (\\u0000)")
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
        return .success(
            DecodedRecord(
                line: number, record: record,
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
        case nil: required = []  // A newer kind of record: kept as it is.
        }
        let missing = required.filter { !record.has($0) }
        if !missing.isEmpty {
            // What the client sent is quoted escaped: a reason is printed by `ingest` and read in terminals.
            let what = record.event.map { "`\(TerminalText.escaped($0))` " } ?? "a \(TerminalText.escaped(type)) record "
            return what + "lacks " + missing.map { "`\($0.rawValue)`" }.joined(separator: ", ")
        }
        if let ts = record.ts, let why = checkMilliseconds(ts, field: "ts") { return why }
        if let why = checkBounds(record) { return why }
        for (value, key) in [
            (record.notificationID, Record.CodingKeys.notificationID), (record.category, .category),
            (record.deviceID, .deviceID), (record.collapseID, .collapseID),
        ] {
            if let value, !value.isEmpty, let why = WireBounds.identifierProblem(value) { return "`\(key.rawValue)` \(why)" }
        }
        // Free text the store keeps in columns of its own (every other field stays in the stored line only): no NUL,
        // which PostgreSQL's text cannot hold, so that every engine stores the same lines.
        for (value, key) in [
            (record.error, Record.CodingKeys.error), (record.action, .action), (record.response, .response),
            (record.appGroup, .appGroup),
        ] where value?.unicodeScalars.contains("\u{0}") == true {
            return "`\(key.rawValue)` holds a NUL character (\\u0000)"
        }
        if let process = record.process, ProcessKind(rawValue: process) == nil {
            return "`process` is \"\(TerminalText.escaped(process))\"; it must be one of app, service, content, server"
        }
        if record.notificationID == "" { return "`notification_id` is empty" }
        if let response = record.response, record.eventName == .contentAction, ResponseOption(rawValue: response) == nil {
            return "`response` is \"\(TerminalText.escaped(response))\"; it must be doNotDismiss, dismiss or dismissAndForwardAction"
        }
        return nil
    }

    /// Why `value` is no epoch-milliseconds instant of ``WireBounds/epochMilliseconds``, or nil when it is one.
    static func checkMilliseconds(_ value: Int64, field: String) -> String? {
        if WireBounds.epochMilliseconds.contains(value) { return nil }
        if value < 0 { return "`\(field)` is negative (\(value)); it must be Unix epoch milliseconds" }
        let bounds = WireBounds.epochMilliseconds
        if (bounds.lowerBound / 1000...bounds.upperBound / 1000).contains(value) {
            return "`\(field)` \(value) looks like seconds, not milliseconds: "
                + "it must be Unix epoch milliseconds (\(value * 1000)?)"
        }
        return "`\(field)` \(value) is out of range: it must be an instant from \(WireBounds.epochDescription)"
    }

    /// The first duration, size or status of `record` outside its range (``WireBounds``), said as a reason.
    static func checkBounds(_ record: Record) -> String? {
        let checks: [(Int64?, Record.CodingKeys, ClosedRange<Int64>, String)] = [
            (record.durationMs, .durationMs, WireBounds.durationMilliseconds, "milliseconds (one day at most)"),
            (record.elapsedMs, .elapsedMs, WireBounds.durationMilliseconds, "milliseconds (one day at most)"),
            (record.waitedMs, .waitedMs, WireBounds.durationMilliseconds, "milliseconds (one day at most)"),
            (record.payloadBytes, .payloadBytes, WireBounds.byteCount, "bytes (4 GiB at most)"),
            (record.bytes, .bytes, WireBounds.byteCount, "bytes (4 GiB at most)"),
            (record.lastFootprintBytes, .lastFootprintBytes, WireBounds.byteCount, "bytes (4 GiB at most)"),
            (record.status, .status, WireBounds.httpStatus, "(an HTTP status)"),
            (record.httpStatus, .httpStatus, WireBounds.httpStatus, "(an HTTP status)"),
        ]
        for (value, key, range, unit) in checks {
            if let value, !range.contains(value) {
                return "`\(key.rawValue)` \(value) is out of range: it must be \(range.lowerBound) to \(range.upperBound) \(unit)"
            }
        }
        if let expiration = record.expiration, expiration != 0, !WireBounds.epochSeconds.contains(expiration) {
            let looksLikeMilliseconds = WireBounds.epochMilliseconds.contains(expiration)
            return "`expiration` \(expiration) is out of range: it must be 0 or Unix epoch seconds from "
                + "\(WireBounds.epochSeconds.lowerBound) to \(WireBounds.epochSeconds.upperBound)"
                + (looksLikeMilliseconds ? " (it looks like milliseconds: \(expiration / 1000)?)" : "")
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
