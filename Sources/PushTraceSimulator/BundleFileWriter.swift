import Foundation
import PushTraceCore
import PushTraceGzip
import PushTraceRecords

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// Writes simulated bundles as an uploader would: device bundles gzip-compressed one member per process file,
/// backend event files as plain NDJSON; each file's modification time is when it was received.
struct BundleFileWriter {
    let directory: URL
    private(set) var records = 0
    private(set) var bundles = 0
    /// The app folders already created.
    private var createdFolders: Set<String> = []

    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    mutating func writeDevice(
        _ device: SimulatedDevice, records pending: [PendingRecord], start: Int64, end: Int64,
        _ rng: inout SeededRandom
    ) throws {
        let sorted = pending.sorted { $0.ts < $1.ts }
        var uploads: [Int64] = []
        var next = start + rng.int(2...12) * 3_600_000
        while next < end {
            uploads.append(next)
            next += rng.int(4...12) * 3_600_000
        }
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
                "type": "manifest", "schema": .int(PushTraceVersion.bundleSchema), "bundle_id": .string(rng.uuid().lowercased()),
                "app_id": .string(device.app.id), "app_version": .string(device.appVersion), "build": .string(device.build),
                "os": .string(device.os), "device_model": .string(device.model), "device_id": .string(device.id),
                "uploaded_at": .int(upload + device.skewMs), "sdk": .string(PushTraceVersion.sdk),
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

    mutating func writeServer(
        app: SimulatedApp, records pending: [PendingRecord], end: Int64,
        _ rng: inout SeededRandom
    ) throws {
        let byDay = Dictionary(grouping: pending) { $0.ts / 86_400_000 }
        for day in byDay.keys.sorted() {
            let dayEnd = min((day + 1) * 86_400_000, end)
            var text =
                JSONLine([
                    "type": "manifest", "schema": .int(PushTraceVersion.bundleSchema), "bundle_id": .string(rng.uuid().lowercased()),
                    "app_id": .string(app.id),
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

    /// Writes one file with `open`/`write`/`futimens`: `Data.write(to:)` calls `fsync` on every file, which for
    /// millions of simulated files costs more than simulating them, and simulated data needs no durability.
    private mutating func write(_ bytes: some ContiguousBytes, app: String, name: String, receivedAt: Int64) throws {
        let folder = directory.appendingPathComponent(app)
        if !createdFolders.contains(app) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            createdFolders.insert(app)
        }
        let path = folder.appendingPathComponent(name).path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SimulationError.cannotWrite(path, errno: errno) }
        defer { close(fd) }
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw SimulationError.cannotWrite(path, errno: errno) }
                offset += written
            }
        }
        let received = timespec(tv_sec: Int(receivedAt / 1000), tv_nsec: Int(receivedAt % 1000) * 1_000_000)
        let times = [received, received]
        guard futimens(fd, times) == 0 else { throw SimulationError.cannotWrite(path, errno: errno) }
        bundles += 1
    }
}

/// `write(2)`, which `BundleFileWriter.write` hides by name.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}

/// A simulated file could not be written.
public enum SimulationError: Error, CustomStringConvertible {
    case cannotWrite(String, errno: Int32)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let code): "cannot write \(path): \(String(cString: strerror(code)))"
        }
    }
}
