import Foundation
import PushTraceRecords

extension Recorder {
    /// Deletes the oldest sealed files, then the oldest unsent bundles no upload holds, while everything kept is over
    /// `limits.maxTotalBytes`, and records how many records went. On the agent's queue, at start and whenever a file
    /// is sealed: between those moments the total grows by at most one file.
    func enforceTotalBound(in container: AgentContainer) {
        let manager = FileManager.default
        var total: Int64 = [container.records, container.sealed, container.outbox].reduce(0) { sum, folder in
            sum + container.files(in: folder).reduce(0) { $0 + container.size(folder.appendingPathComponent($1)) }
        }
        guard total > limits.maxTotalBytes else { return }
        let cursors = UploadCursors(container: container)
        var droppedRecords = 0, droppedBytes: Int64 = 0
        for name in container.files(in: container.sealed) where total > limits.maxTotalBytes {
            let url = container.sealed.appendingPathComponent(name), size = container.size(url)
            let from = min(cursors[name], size)
            droppedRecords += Self.records(in: url, from: from)
            droppedBytes += size - from
            try? manager.removeItem(at: url)
            total -= size
        }
        let now = clock()
        // A bundle an upload holds may be on its way to the server right now: deleting it would count as dropped
        // records the server then stores. Holds are taken under the pack lock, so bundles are only deleted under it
        // too; when an upload has it, they wait for the next cleanup.
        PackLock(container: container).ifFree {
            for bundle in Outbox(container: container).bundles() where total > limits.maxTotalBytes && !bundle.metadata.isHeld(at: now) {
                droppedRecords += bundle.metadata.records
                droppedBytes += bundle.bodySize
                total -= bundle.bodySize
                bundle.remove()
            }
        }
        guard droppedRecords > 0 else { return }
        appendLocked(
            encode(
                .log,
                [
                    ("level", "warning"),
                    (
                        "message",
                        .string(
                            "pushtrace dropped \(droppedRecords) records not yet uploaded: its files in the App Group "
                                + "container were over their bound of \(limits.maxTotalBytes) bytes")
                    ),
                    ("dropped_records", .int(Int64(droppedRecords))), ("dropped_bytes", .int(droppedBytes)),
                ]))
    }

    /// The records a file holds from byte `offset` on (a cut last line counts), where an earlier drop notice counts
    /// as the records it reported: notices add up, so the latest ones always account for every record dropped.
    static func records(in url: URL, from offset: Int64) -> Int {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return 0 }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        guard let data = try? handle.readToEnd() else { return 0 }
        // `Data.range(of:)`, not `firstRange(of:)`: the latter is iOS 16 where it resolves to the standard library's.
        let marker = Data("\"dropped_records\":".utf8)
        return data.split(separator: UInt8(ascii: "\n")).reduce(0) { total, line in
            guard line.range(of: marker) != nil,
                let notice = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let reported = (notice["dropped_records"] as? NSNumber)?.intValue
            else { return total + 1 }
            return total + reported
        }
    }
}
