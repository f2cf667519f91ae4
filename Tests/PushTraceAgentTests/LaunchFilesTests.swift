import Foundation
import PushTraceAgent
import Testing

/// What happens to a live launch's files when another launch tidies them away, and the attachment types the
/// service-extension handle accepts (the shared `AttachmentKind`).
@Suite("Agent: a live launch's files, attachment kinds")
struct LaunchFilesTests {
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int64 = 1_763_622_000_000
        var now: Int64 { lock.withLock { value } }
        func advance(seconds: Int64) { lock.withLock { value += seconds * 1000 } }
    }

    @Test("a marker removed by another launch is written again at the next notification, so a later kill is still reported")
    func markerRecreated() throws {
        let temporary = try TemporaryContainer()
        let clock = Clock()
        let recorder = try Recorder(process: .service, container: temporary.container, clock: { clock.now })
        let state = temporary.root.appendingPathComponent("state")
        let marker = try #require(temporary.files("state").first { $0.hasPrefix("inflight-") })
        try FileManager.default.removeItem(at: state.appendingPathComponent(marker))
        clock.advance(seconds: 180)  // removed only after minutes untouched; the next rewrite looks after a pause
        let trace = recorder.service.begin("m-1")
        let data = try Data(contentsOf: state.appendingPathComponent(marker))
        #expect(String(decoding: data, as: UTF8.self).contains("\"m-1\""))
        trace.delivered()
        #expect(try Data(contentsOf: state.appendingPathComponent(marker)).isEmpty)
    }

    @Test("a file sealed by another launch while this one was quiet: the next write, a minute of wall clock later, starts a new file")
    func sealedWhileQuiet() throws {
        let temporary = try TemporaryContainer()
        let clock = Clock()
        let recorder = try Recorder(process: .app, container: temporary.container, clock: { clock.now })
        recorder.log("before the pause")
        let first = try #require(recorder.currentFile)
        // Another launch judged this file idle and sealed it; the uploader may take it any moment.
        try FileManager.default.moveItem(
            at: first, to: temporary.root.appendingPathComponent("sealed").appendingPathComponent(first.lastPathComponent))
        clock.advance(seconds: 61)
        recorder.log("after the pause")
        let second = try #require(recorder.currentFile)
        #expect(second != first && FileManager.default.fileExists(atPath: second.path))
        let sealed = try String(
            contentsOf: temporary.root.appendingPathComponent("sealed").appendingPathComponent(first.lastPathComponent),
            encoding: .utf8)
        #expect(!sealed.contains("after the pause"))
        #expect(try String(contentsOf: second, encoding: .utf8).contains("after the pause"))
    }

    @Test(
        "records that cannot be written (the container unusable, as before the first unlock) are counted, and the count is written as soon as writing works again"
    )
    func unwritableContainerCountsDrops() throws {
        let temporary = try TemporaryContainer()
        let recorder = try Recorder(
            process: .service, container: temporary.container,
            limits: RecorderLimits(maxFileBytes: 300, maxTotalBytes: 1 << 20))
        let records = temporary.root.appendingPathComponent("records")
        // The folder replaced by a plain file: no new record file can be opened there, even by root.
        try FileManager.default.removeItem(at: records)
        try Data().write(to: records)
        for index in 0..<10 { recorder.log("while locked \(index) " + String(repeating: "l", count: 60)) }
        #expect(recorder.unwrittenRecords > 0)
        let lost = recorder.unwrittenRecords
        try FileManager.default.removeItem(at: records)
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        recorder.log("unlocked")
        #expect(recorder.unwrittenRecords == 0)
        let lines = try temporary.recordLines()
        let notice = try #require(lines.first { $0["dropped_records"] != nil })
        #expect((notice["dropped_records"] as? NSNumber)?.intValue == lost)
        #expect((notice["message"] as? String)?.contains("could not write \(lost) records") == true)
        #expect(lines.last?["message"] as? String == "unlocked")
        let kept = lines.compactMap { $0["message"] as? String }.filter { $0.hasPrefix("while locked") }.count
        #expect(kept + lost == 10)

        // A recorder that starts while no file can be opened at all starts anyway, counting, and reports once it can.
        try FileManager.default.removeItem(at: records)
        try Data().write(to: records)
        let early = try Recorder(process: .content, container: temporary.container)
        #expect(early.currentFile == nil)
        early.log("before the first unlock")
        #expect(early.unwrittenRecords == 1)
        try FileManager.default.removeItem(at: records)
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        early.log("after it")
        let later = try TemporaryContainer.parse(Data(contentsOf: try #require(early.currentFile)), file: "content")
        #expect(
            later.map { $0["message"] as? String } == [
                "pushtrace could not write 1 record: the container's records folder cannot be written",
                "after it",
            ])
    }

    @Test("attachment kinds: the served MIME type names the file extension, else the URL's; Apple's limits in decimal megabytes")
    func attachmentKinds() {
        #expect(AttachmentKind.fileExtension(forMIME: "image/png") == "png")
        #expect(AttachmentKind.fileExtension(forMIME: "image/jpeg; charset=binary") == "jpg")
        #expect(AttachmentKind.fileExtension(forMIME: "application/octet-stream") == nil)
        #expect(AttachmentKind(fileExtension: "JPG") == .image && AttachmentKind(fileExtension: "webp") == nil)
        #expect(AttachmentKind.image.maxBytes == 10_000_000 && AttachmentKind.image.limitText == "10 MB")
        #expect(AttachmentKind.audio.maxBytes == 5_000_000 && AttachmentKind.video.maxBytes == 50_000_000)
    }
}
