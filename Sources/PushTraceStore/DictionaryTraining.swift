import PushTraceRecords

/// How an app's preset dictionary is made from its lines, the same in every engine. A dictionary is never changed
/// once stored (blocks name it by its Adler-32); the engine stores it and decides when to train.
package enum DictionaryTraining {
    /// Lines of an app after which its dictionary is trained.
    package static let trainingBytes = 64 * 1024
    /// zlib's window: a longer dictionary's start could never be referred to.
    package static let dictionaryBytes = 32 * 1024

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
