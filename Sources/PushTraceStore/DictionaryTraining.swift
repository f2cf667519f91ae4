import PushTraceRecords

/// How an app's preset dictionaries are made from its lines, and when, the same in every engine. A dictionary is
/// never changed once stored (blocks name it by its Adler-32): an app gets newer ones as its volume grows, and new
/// blocks take the newest. The engine stores them.
///
/// Anyone holding an app's public ingest token can be its first uploader: a dictionary is trained from the lines of
/// several devices (``Sample``), newest bundles first, and trained again as the app's volume grows
/// (``retrainingBytes(afterGeneration:)``), so that no uploader fixes it for ever.
package enum DictionaryTraining {
    /// Lines of an app in a training sample, and the lines it must hold before its first dictionary.
    package static let trainingBytes = 64 * 1024
    /// The newest bundles of an app a sample is drawn from (their first block each).
    package static let sampledBundles = 256
    /// zlib's window: a longer dictionary's start could never be referred to.
    package static let dictionaryBytes = 32 * 1024

    /// Bytes of lines an app stores, after its `generation`-th dictionary, before the next one is trained: sixteen
    /// times more each time (1 MiB, 16 MiB, 256 MiB), then every 1 GiB.
    package static func retrainingBytes(afterGeneration generation: Int) -> Int {
        guard generation > 0 else { return trainingBytes }
        return min(trainingBytes << (4 * min(generation, 4)), 1 << 30)
    }

    /// Bytes of lines after which an app's training is looked at again: ``retrainingBytes(afterGeneration:)``,
    /// doubled for each look in a row that found no full sample (an app whose newest bundles come from too few
    /// sources), so that looking costs little however long that lasts.
    package static func lookBytes(generation: Int, misses: Int) -> Int {
        retrainingBytes(afterGeneration: generation) << min(misses, 8)
    }

    /// The source a block of a sample counts against: its device, or the backend (bundles without a device).
    package static func source(deviceID: String?, bundle: Int64) -> String {
        deviceID.map { "device:" + $0 } ?? "backend"
    }

    /// The most of a sample the backend's bundles give together: its lines are the most alike.
    package static let backendBytes = trainingBytes / 4
    /// The most of a sample one device gives.
    package static let deviceBytes = trainingBytes / 8

    /// Lines for training, taken block by block from the newest bundles, at most ``deviceBytes`` of each device and
    /// ``backendBytes`` of the backend (``source(deviceID:bundle:)``).
    package struct Sample {
        package private(set) var lines: [String] = []
        package private(set) var bytes = 0
        private var bySource: [String: Int] = [:]

        package init() {}

        /// Whether it holds ``trainingBytes`` of lines (from seven sources at least).
        package var isFull: Bool { bytes >= trainingBytes }

        /// Whether a dictionary may be trained from it once the newest bundles were all offered: full, or three
        /// sixteenths full (an app with few devices, or only its backend: never a single device).
        package var isEnough: Bool { bytes >= trainingBytes * 3 / 16 }

        private static func limit(_ source: String) -> Int { source == "backend" ? backendBytes : deviceBytes }

        /// Whether a block of `source` could add anything: checked before the block is decompressed.
        package func wants(_ source: String) -> Bool { !isFull && bySource[source, default: 0] < Self.limit(source) }

        /// Takes what the bounds allow of one block's lines, from `source`.
        package mutating func offer(_ blockLines: [String], source: String) {
            for line in blockLines {
                let size = line.utf8.count + 1
                guard !isFull, bySource[source, default: 0] + size <= Self.limit(source) else { return }
                bySource[source, default: 0] += size
                lines.append(line)
                bytes += size
            }
        }
    }

    /// A dictionary of typical lines: the latest few of each record shape (type, process, event), the most common
    /// shapes last, where deflate refers back to them most cheaply; more of each shape while there is room.
    package static func dictionary(from lines: [String]) -> [UInt8] {
        var byShape: [String: [String]] = [:]
        var counts: [String: Int] = [:]
        for line in lines {
            var line = line
            let record = line.withUTF8 { Record(scanning: UnsafeRawBufferPointer($0)) }
            let shape = [record?.type, record?.process, record?.event].map { $0 ?? "" }.joined(separator: "/")
            counts[shape, default: 0] += 1
            var latest = byShape[shape, default: []]
            latest.append(line)
            if latest.count > 64 { latest.removeFirst() }
            byShape[shape] = latest
        }
        let shapes = counts.keys.sorted { (counts[$0]!, $0) < (counts[$1]!, $1) }
        // Least common first: when the shapes do not all fit, the common ones (at the end) are kept.
        // As many of each shape's latest lines as fit, the same number of each (fewer where a shape has fewer).
        var perShape = 1
        func assemble(_ count: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for shape in shapes {
                for line in byShape[shape]!.suffix(count) {
                    bytes.append(contentsOf: line.utf8)
                    bytes.append(UInt8(ascii: "\n"))
                }
            }
            return bytes
        }
        while perShape < 64, assemble(perShape * 2).count <= dictionaryBytes { perShape *= 2 }
        return Array(assemble(perShape).suffix(dictionaryBytes))
    }
}

/// Which dictionaries retention empties: an app's dictionary that a newer one of the app superseded at least
/// ``grace`` ago, once no record block names it any more. Its config bodies are compressed again on their own
/// (``ConfigBody/recompressedAlone(_:dictionaries:)``) first, then its bytes are emptied, so that the lines it was
/// trained from go with the blocks that held them; its row stays (its app's count of dictionaries, which spaces
/// the next training, never goes down). The newest of each app, and the shared one of older stores, stay whole.
/// Both engines do it; every writer, every server included, has taken the newer dictionary for new blocks within
/// ``grace``.
package enum DictionaryRetirement {
    /// How long a superseded dictionary stays whole whatever its use: every writer has taken the newer one for new
    /// blocks by then.
    package static let grace: Int64 = 3_600_000

    /// A stored dictionary, as retention weighs it.
    package struct Candidate: Sendable, Hashable {
        package var id: Int64
        package var appID: String?
        package var adler32: Int64
        package var trainedAt: Int64

        package init(id: Int64, appID: String?, adler32: Int64, trainedAt: Int64) {
            self.id = id
            self.appID = appID
            self.adler32 = adler32
            self.trainedAt = trainedAt
        }
    }

    /// The dictionaries a newer one of the same app superseded at least ``grace`` before `now`: those retention
    /// may drop once no block names them.
    package static func superseded(_ dictionaries: [Candidate], now: Int64) -> [Candidate] {
        var byApp: [String: [Candidate]] = [:]
        for dictionary in dictionaries { if let app = dictionary.appID { byApp[app, default: []].append(dictionary) } }
        return byApp.values.flatMap { own -> [Candidate] in
            let ordered = own.sorted { $0.id < $1.id }
            return zip(ordered, ordered.dropFirst()).compactMap { old, newer in newer.trainedAt <= now - grace ? old : nil }
        }.sorted { $0.id < $1.id }
    }

    /// The first bytes of a config body compressed against `adler32`: zlib's header names its dictionary there.
    package static func headerPrefix(adler32: Int64) -> [UInt8] {
        let id = UInt32(truncatingIfNeeded: adler32)
        return [UInt8(id >> 24), UInt8(id >> 16 & 0xff), UInt8(id >> 8 & 0xff), UInt8(id & 0xff)]
    }
}

extension ConfigBody {
    /// A compressed body's line compressed again against no dictionary, so that the one it named can go.
    package static func recompressedAlone(_ bytes: [UInt8], dictionaries: (UInt32) -> [UInt8]?) throws -> [UInt8] {
        compressed(try text(compressed: bytes, dictionaries: dictionaries), dictionary: .none)
    }
}
