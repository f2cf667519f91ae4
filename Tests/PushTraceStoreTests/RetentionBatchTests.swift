import Testing

@testable import PushTraceStore

@Suite("Retention: a transaction's bundles are bounded in lines and in bytes")
struct RetentionBatchTests {
    @Test("bundles are taken until their lines or their bytes reach the bound, and always one")
    func bounds() {
        let lines = { (bundle: (Int, Int)) in bundle.0 }
        let bytes = { (bundle: (Int, Int)) in bundle.1 }
        let small = Array(repeating: (10, 1_000), count: 100)
        #expect(RetentionBatch.take(small, lineLimit: 55, byteLimit: 1 << 20, lines: lines, bytes: bytes).count == 6)
        #expect(RetentionBatch.take(small, lineLimit: 10_000, byteLimit: 4_500, lines: lines, bytes: bytes).count == 4)
        let huge = [(1, 1 << 30), (1, 1)]
        #expect(RetentionBatch.take(huge, lineLimit: 10_000, byteLimit: 1 << 20, lines: lines, bytes: bytes).count == 1)
        #expect(RetentionBatch.take([(Int, Int)](), lineLimit: 1, lines: lines, bytes: bytes).isEmpty)
    }
}
