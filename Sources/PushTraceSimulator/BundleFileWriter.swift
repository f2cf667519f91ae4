import Foundation
import PushTraceCore
import PushTraceGzip
import PushTraceRecords

/// Writes simulated bundles as an uploader would: device bundles gzip-compressed one member per process file,
/// backend event files as plain NDJSON; each file's modification time is when it was received.
struct BundleFileWriter {
    let directory: URL
    private(set) var records = 0
    private(set) var bundles = 0

    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    mutating func writeDevice(_ device: SimulatedDevice, records pending: [PendingRecord], start: Int64, end: Int64,
                              _ rng: inout SeededRandom) throws {
        let sorted = pending.sorted { $0.ts < $1.ts }
        var uploads: [Int64] = []
        var next = start + rng.int(2...12) * 3_600_000
        while next < end { uploads.append(next); next += rng.int(4...12) * 3_600_000 }
        uploads.append(end)
        var index = 0
        for (sequence, upload) in uploads.enumerated() {
            var batch: [PendingRecord] = []
            while index < sorted.count, sorted[index].ts <= upload || upload == end {
                batch.append(sorted[index])
                index += 1
            }
            guard !batch.isEmpty else { continue }
            let manifest = JSONLine([
                "type": "manifest", "schema": 1, "bundle_id": .string(rng.uuid().lowercased()),
                "app_id": .string(device.app.id), "app_version": .string(device.appVersion), "build": .string(device.build),
                "os": .string(device.os), "device_model": .string(device.model), "device_id": .string(device.id),
                "uploaded_at": .int(upload + device.skewMs), "sdk": "pushtrace-swift/1.0.0",
            ]).text
            var members = [Deflater.gzip(Array((manifest + "\n").utf8))]
            let configs = device.configLines(at: start - 86_400_000 + device.skewMs)
            for process in [ProcessKind.app, .service, .content] {
                var text = configs.filter { $0.0 == process }.map { $0.1 + "\n" }.joined()
                for record in batch where record.process == process {
                    text += record.line(clockAheadMs: device.skewMs) + "\n"
                }
                members.append(Deflater.gzip(Array(text.utf8)))
            }
            let name = "\(device.id)-\(String(sequence).leftPadded(3)).ndjson.gz"
            try write(Data(members.joined()), app: device.app.id, name: name, receivedAt: upload + rng.int(150...900))
            records += batch.count + configs.count
        }
    }

    mutating func writeServer(app: SimulatedApp, records pending: [PendingRecord], end: Int64,
                              _ rng: inout SeededRandom) throws {
        let byDay = Dictionary(grouping: pending) { $0.ts / 86_400_000 }
        for day in byDay.keys.sorted() {
            let dayEnd = min((day + 1) * 86_400_000, end)
            var text = JSONLine([
                "type": "manifest", "schema": 1, "bundle_id": .string(rng.uuid().lowercased()), "app_id": .string(app.id),
                "device_id": "server", "uploaded_at": .int(dayEnd), "sdk": "pushtrace-backend/1.0.0",
            ]).text + "\n"
            let records = byDay[day]!.sorted { $0.ts < $1.ts }
            for record in records { text += record.line(clockAheadMs: 0) + "\n" }
            let date = Date(timeIntervalSince1970: Double(day * 86_400))
            let name = "server-\(ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: .withFullDate)).ndjson"
            try write(Data(text.utf8), app: app.id, name: name, receivedAt: dayEnd + rng.int(100...400))
            self.records += records.count
        }
    }

    private mutating func write(_ data: Data, app: String, name: String, receivedAt: Int64) throws {
        let folder = directory.appendingPathComponent(app)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(receivedAt) / 1000)],
                                              ofItemAtPath: url.path)
        bundles += 1
    }
}
