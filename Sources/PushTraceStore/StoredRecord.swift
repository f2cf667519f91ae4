import Foundation
import PushTraceRecords

/// Reading a stored line back as a record, the same in every engine.
package enum StoredRecord {
    /// A stored record body, read as ingest read it when it was accepted (in one pass, or when the one-pass reader
    /// leaves it aside, by `JSONDecoder`), so that a line is attributed to the notification it was indexed under;
    /// a body an earlier release stored without those checks falls back to `JSONSerialization`. Nil when the body
    /// is not a JSON object at all (a damaged store).
    package static func record(storedBody body: inout String) -> Record? {
        if let scanned = body.withUTF8({ Record(scanning: UnsafeRawBufferPointer($0)) }) { return scanned }
        if let decoded = try? JSONDecoder().decode(Record.self, from: Data(body.utf8)) { return decoded }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] else { return nil }
        return Record(jsonObject: object)
    }

    /// Only the line's time, as ``record(storedBody:)`` would read it: what an export needs.
    package static func timestamp(storedBody body: inout String) -> Int64?? {
        if let scanned = body.withUTF8({ Record.timestamp(scanning: UnsafeRawBufferPointer($0)) }) { return scanned }
        return record(storedBody: &body).map(\.ts)
    }
}
