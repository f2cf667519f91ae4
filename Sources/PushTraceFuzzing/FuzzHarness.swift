import Foundation
import PushTraceCore
import PushTraceGzip
import PushTraceRecords

/// What the fuzzers run on each input, and what the regression tests replay their crashers through: the bundle
/// decoder as the server drives it (body in arbitrary pieces, then `finish`), with invariants checked.
///
/// An input may be refused (that is a `BundleError`, an answer); it must never crash, hang, allocate without
/// bound, or break an invariant (which traps, so that libFuzzer keeps the input).
public enum FuzzHarness {
    /// Small limits, so that the fuzzer reaches them.
    public static let limits = BundleLimits(maxDecompressedBytes: 1 << 20, maxLineBytes: 16 << 10, keptBytesOfLongLine: 256)

    /// A whole body. Byte 0 picks the encoding (identity, gzip, deflate, sniff), byte 1 the piece size in which
    /// the rest is fed, as a network delivers it.
    public static func bundle(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2 else { return }
        let encodings: [ContentEncoding] = [.identity, .gzip, .deflate, .sniff]
        decode(
            UnsafeRawBufferPointer(rebasing: input[2...]), encoding: encodings[Int(input[0]) % encodings.count],
            piece: Int(input[1]) + 1)
    }

    /// Record lines after a valid manifest, as plain NDJSON; and each line through the one-pass record and
    /// manifest readers, which must read any line they take exactly as `JSONDecoder` does.
    public static func records(_ input: UnsafeRawBufferPointer) {
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let bytes = UnsafeRawBufferPointer(rebasing: line)
            if let scanned = Record(scanning: bytes) {
                let strict = try? JSONDecoder().decode(Record.self, from: Data(bytes))
                precondition(strict == scanned, "the one-pass reader and JSONDecoder read a record line differently")
            }
            if let ts = Record.timestamp(scanning: bytes) {
                // An export reads a stored line's time alone: the same time as the whole record's, whichever reads it.
                let whole = Record(scanning: bytes) ?? (try? JSONDecoder().decode(Record.self, from: Data(bytes)))
                precondition(whole == nil || whole?.ts == ts, "a record's time read alone differs from the whole record's")
            }
            if let flat = JSONValue(scanningFlatObject: bytes) {
                let strict = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
                precondition(strict == flat, "the one-pass reader and JSONDecoder read a flat object differently")
            }
            if let scanned = Manifest(scanning: bytes) {
                let strict = try? JSONDecoder().decode(Manifest.self, from: Data(bytes))
                precondition(strict == scanned, "the one-pass reader and JSONDecoder read a manifest differently")
            }
        }
        let manifest =
            Array(#"{"type":"manifest","schema":1,"bundle_id":"fuzz","app_id":"net.rorklab.dailypick","device_id":"d-1"}"#.utf8) + [10]
        (manifest + Array(input)).withUnsafeBytes { decode($0, encoding: .identity, piece: 4096) }
    }

    /// When the fuzzed bundles are taken to be received: the reference of their clock correction.
    static let receivedAt: Int64 = 1_763_622_003_120

    private static func decode(_ body: UnsafeRawBufferPointer, encoding: ContentEncoding, piece: Int) {
        let decoder = BundleDecoder(encoding: encoding, limits: limits)
        var lines = 0, lastLine = 0
        // Accepted records by notification, corrected as the store corrects them, for the diagnosis below.
        var timelines: [String: [TimelineEntry]] = [:]
        func check(_ item: BundleItem) {
            lines += 1
            let line: Int
            switch item {
            case .manifest: line = 1
            case .record(let record):
                line = record.line
                // Known kinds need `ts` and `process`; a kind this version does not know is kept as it came (docs/protocol.md#bundles).
                precondition(
                    record.record.recordType == nil || (record.record.ts != nil && record.record.processKind != nil),
                    "a \(record.record.type ?? "") record passed without ts or a known process")
                // Every number a reader does arithmetic on lies in its range (WireBounds).
                precondition(record.record.ts.map(WireBounds.epochMilliseconds.contains) ?? true, "a ts out of range passed")
                for duration in [record.record.durationMs, record.record.elapsedMs, record.record.waitedMs] {
                    precondition(duration.map(WireBounds.durationMilliseconds.contains) ?? true, "a duration out of range passed")
                }
                if let id = record.notificationID, let ts = record.record.ts {
                    let offset = ClockCorrection.offset(receivedAt: receivedAt, uploadedAt: decoder.manifest?.uploadedAt)
                    timelines[id, default: []].append(
                        TimelineEntry(
                            ts: ClockCorrection.corrected(ts, by: offset), deviceTs: offset != 0 ? ts : nil,
                            record: record.record, json: record.json))
                }
            case .rejected(let rejected):
                line = rejected.line
                precondition(
                    rejected.raw.count <= max(limits.maxLineBytes, limits.keptBytesOfLongLine) + 2,
                    "a rejected line kept whole past the limit")
                precondition(!rejected.reason.isEmpty, "a rejected line without a reason")
            }
            precondition(line > lastLine, "line numbers out of order: \(line) after \(lastLine)")
            lastLine = line
        }
        do {
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + piece)
                try decoder.consume(UnsafeRawBufferPointer(rebasing: body[offset..<end])) { check($0) }
                offset = end
            }
            try decoder.finish { check($0) }
            precondition(decoder.manifest != nil, "a bundle finished without a manifest")
            // What settling and `why` do with the stored records: diagnose them (its rules do arithmetic on times,
            // durations and sizes). Must not trap. Rendering the answer decodes every line again and would slow the
            // fuzzer twentyfold; WireBoundsTests render answers from extreme values instead.
            for (id, entries) in timelines.prefix(4) {
                let input = DiagnosisInput(
                    appID: decoder.manifest?.appID ?? "", notificationID: id, entries: entries,
                    deviceLastSeen: entries.map(\.ts).max())
                precondition(!Diagnoser().diagnose(input).findings.isEmpty, "a diagnosis without findings")
            }
        } catch is BundleError {
            // Refused: an answer, not a failure.
        } catch {
            preconditionFailure("an error that is not a BundleError: \(error)")
        }
        precondition(
            decoder.decompressedBytes <= limits.maxDecompressedBytes + piece + 65_536,
            "decompressed \(decoder.decompressedBytes) bytes past the limit")
    }
}

extension FuzzHarness {
    /// A stored record block, as the store reads one back (`LineBlock`).
    ///
    /// Byte 0 picks the mode. Even: the rest is lines, which are compressed against a dictionary made of their own
    /// first 256 bytes and must decode back exactly. Odd: the rest is a block as stored: a 2-byte dictionary length
    /// and the dictionary, the declared line count (2 bytes) and byte count (3 bytes), then the data, which must be
    /// refused or decoded to exactly what was declared, without a crash or an allocation beyond it.
    public static func block(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        if mode % 2 == 0 {
            let lines = rest.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
            let dictionary = Array(rest.prefix(256))
            let block = LineBlock.compress(lines, dictionary: dictionary, level: Int32(mode % 10))
            let known = DictionaryDeflate.identifier(of: dictionary)
            let decoded = try? LineBlock.decode(block.data, lines: lines.count, rawBytes: block.rawBytes) {
                $0 == known ? dictionary : nil
            }
            precondition(decoded == lines, "a block did not decode to the lines it was made of")
            return
        }
        var at = 0
        func take(_ count: Int) -> Int? {
            guard at + count <= rest.count else { return nil }
            defer { at += count }
            return rest[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
        }
        guard let dictionaryCount = take(2), at + dictionaryCount <= rest.count else { return }
        let dictionary = Array(rest[at..<at + dictionaryCount])
        at += dictionaryCount
        guard let lines = take(2), let rawBytes = take(3) else { return }
        let data = Array(rest[at...])
        let known = DictionaryDeflate.identifier(of: dictionary)
        if let decoded = try? LineBlock.decode(data, lines: lines, rawBytes: rawBytes, dictionaries: { $0 == known ? dictionary : nil }) {
            precondition(decoded.count == lines, "a decoded block holds other than its declared lines")
        }
    }
}
