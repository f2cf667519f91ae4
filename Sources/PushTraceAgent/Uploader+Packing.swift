import Foundation
import PushTraceGzip

extension Uploader {
    /// Writes every record not yet in a bundle into bundles in `outbox/`; returns the IDs of the bundles it wrote.
    /// Called holding the ``PackLock``.
    ///
    /// Sealed files are taken to their end and deleted; the files running processes are writing are taken up to
    /// their last complete line, and the upload cursor remembers where. Each source file becomes one gzip member,
    /// after a member repeating each process's latest config record.
    ///
    /// - Parameters:
    ///   - prefix: only files whose names start with it (the service extension's own launch); all when nil.
    ///   - maxBytes: at most one bundle of this many bytes of records; as many bundles as it takes when nil.
    ///   - deadline: an uptime (`DispatchTime` nanoseconds) after which no further bundle is begun.
    func pack(only prefix: String? = nil, maxBytes: Int64? = nil, deadline: UInt64? = nil) throws -> [String] {
        var cursors = UploadCursors(container: container)
        recover(&cursors)
        recorderToSeal?.settle()
        recorderToSeal?.seal()
        var packed: [String] = []
        while let bundleID = try packOne(&cursors, only: prefix, budget: maxBytes ?? configuration.maxBundleBytes) {
            packed.append(bundleID)
            if maxBytes != nil { break }
            // Cancelled, past its deadline or with the app's background time running out, it stops between bundles,
            // so that the lock is let go at once: each bundle written is whole, and the rest waits for the next pass.
            if Task.isCancelled || PackLockHolders.of(container).isSuspended
                || deadline.map({ DispatchTime.now().uptimeNanoseconds >= $0 }) == true
            {
                break
            }
        }
        return packed
    }

    /// Finishes what an interrupted `pack` left: bodies without metadata are removed; the cursor advances of every
    /// bundle already written are applied again (offsets only grow), and the files they consumed deleted.
    private func recover(_ cursors: inout UploadCursors) {
        let manager = FileManager.default
        let names = (try? manager.contentsOfDirectory(atPath: container.outbox.path)) ?? []
        for name in names where name.hasPrefix(".") || (name.hasSuffix(".gz") && !names.contains(String(name.dropLast(3)) + ".json")) {
            try? manager.removeItem(at: container.outbox.appendingPathComponent(name))
        }
        for bundle in Outbox(container: container).bundles() {
            for (file, offset) in bundle.metadata.advances { cursors.advance(file, to: offset) }
            for file in bundle.metadata.consumed { consume(file, &cursors) }
        }
        // Cursors of files that are gone (uploaded and deleted, or dropped over the size bound).
        for file in cursors.offsets.keys
        where !manager.fileExists(atPath: container.records.appendingPathComponent(file).path)
            && !manager.fileExists(atPath: container.sealed.appendingPathComponent(file).path)
        {
            cursors.forget(file)
        }
        try? cursors.save()
    }

    private func consume(_ file: String, _ cursors: inout UploadCursors) {
        try? FileManager.default.removeItem(at: container.sealed.appendingPathComponent(file))
        cursors.forget(file)
    }

    /// Writes one bundle of at most `budget` bytes of new records; its ID, or nil when there was nothing new.
    private func packOne(_ cursors: inout UploadCursors, only prefix: String?, budget total: Int64) throws -> String? {
        var budget = total
        var pieces: [(url: URL, name: String, from: Int64, to: Int64, sealed: Bool)] = []
        let sources =
            (container.files(in: container.sealed).map { (container.sealed.appendingPathComponent($0), $0, true) }
            + container.files(in: container.records).map { (container.records.appendingPathComponent($0), $0, false) })
            .filter { prefix == nil || $0.1.hasPrefix(prefix!) }
        for (url, name, sealed) in sources where budget > 0 {
            let from = cursors[name], size = container.size(url)
            guard size > from else {
                if sealed { pieces.append((url, name, from, from, true)) }  // nothing left: just delete it
                continue
            }
            // Whole lines only, from a file still being written or when the budget cuts a file short.
            let wanted = min(size, from + budget)
            let to = (sealed && wanted == size) ? size : Self.lineEnd(in: url, from: from, before: wanted)
            guard to > from || sealed else { continue }
            pieces.append((url, name, from, to, sealed))
            budget -= to - from
        }
        guard pieces.contains(where: { $0.to > $0.from }) else {
            for piece in pieces where piece.sealed { consume(piece.name, &cursors) }
            try cursors.save()
            return nil
        }
        let createdAt = clock()
        let bundleID = UUID().uuidString.lowercased()
        let name = OutboxBundle.name(createdAt: createdAt, bundleID: bundleID)
        let temporary = container.outbox.appendingPathComponent(".\(name).gz")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw AgentError.containerUnusable(temporary.path, reason: "cannot create the bundle file")
        }
        FileProtection.apply(to: temporary)
        let output = try FileHandle(forWritingTo: temporary)
        var records = 0
        do {
            defer { try? output.close() }
            let configs = container.files(in: container.state).filter { $0.hasPrefix("config-") }
                .compactMap { try? Data(contentsOf: container.state.appendingPathComponent($0)) }
            if !configs.isEmpty {
                let joined = configs.reduce(Data(), +)
                records += joined.filter { $0 == UInt8(ascii: "\n") }.count
                try output.write(contentsOf: Deflater.gzip(Array(joined)))
            }
            for piece in pieces where piece.to > piece.from {
                records += try Self.compress(piece.url, from: piece.from, to: piece.to, into: output)
            }
            try output.synchronize()
        }
        var metadata = OutboxBundle.Metadata(bundleID: bundleID, createdAt: createdAt, records: records, advances: [:], consumed: [])
        for piece in pieces {
            if piece.sealed && piece.to >= container.size(piece.url) {
                metadata.consumed.append(piece.name)
            } else {
                metadata.advances[piece.name] = piece.to
            }
        }
        let bundle = OutboxBundle(metadataURL: container.outbox.appendingPathComponent(name + ".json"), metadata: metadata)
        try FileManager.default.moveItem(at: temporary, to: bundle.bodyURL)
        try bundle.save()
        // The bundle is on disk: only now do the cursors move past its records.
        for (file, offset) in metadata.advances { cursors.advance(file, to: offset) }
        for file in metadata.consumed { consume(file, &cursors) }
        try cursors.save()
        return bundleID
    }

    /// Compresses bytes `from..<to` of `url` as one gzip member into `output`, 64 KiB at a time; returns the lines.
    private static func compress(_ url: URL, from: Int64, to: Int64, into output: FileHandle) throws -> Int {
        let input = try FileHandle(forReadingFrom: url)
        defer { try? input.close() }
        try input.seek(toOffset: UInt64(from))
        let deflater = Deflater()
        var remaining = to - from, lines = 0, last = UInt8(ascii: "\n")
        while remaining > 0, let chunk = try input.read(upToCount: Int(min(remaining, 64 * 1024))), !chunk.isEmpty {
            remaining -= Int64(chunk.count)
            lines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            last = chunk.last!
            try chunk.withUnsafeBytes { bytes in try deflater.consume(bytes) { try output.write(contentsOf: Data($0)) } }
        }
        try deflater.finish { try output.write(contentsOf: Data($0)) }
        return lines + (last == UInt8(ascii: "\n") ? 0 : 1)
    }

    /// The offset just after the last newline in `from..<before` of `url` (`from` when there is none).
    private static func lineEnd(in url: URL, from: Int64, before: Int64) -> Int64 {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return from }
        defer { try? handle.close() }
        var end = before
        while end > from {
            let start = max(from, end - 64 * 1024)
            try? handle.seek(toOffset: UInt64(start))
            guard let chunk = try? handle.read(upToCount: Int(end - start)), !chunk.isEmpty else { return from }
            if let index = chunk.lastIndex(of: UInt8(ascii: "\n")) {
                return start + Int64(chunk.distance(from: chunk.startIndex, to: index)) + 1
            }
            end = start
        }
        return from
    }
}
