import PushTraceCore
import PushTraceGzip
import Testing

@Suite("Bundle decoding (docs/protocol.md#bundles)")
struct BundleDecoderTests {
    @Test("several gzip members are all read, whatever the chunking")
    func multiMemberGzip() {
        let body = Fixture.gzip([Fixture.manifest]) + Fixture.gzip([Fixture.received]) + Fixture.gzip([Fixture.delivered])
        for chunk in [1, 7, 100, 1 << 20] {
            let decoded = Decoded(body, chunk: chunk)
            #expect(decoded.error == nil)
            #expect(decoded.manifest != nil)
            #expect(decoded.records.map(\.record.event) == ["service.received", "service.delivered"])
        }
    }

    @Test("plain NDJSON with CRLF, empty lines skipped, IDs normalised")
    func plainCRLF() {
        let decoded = Decoded(Fixture.text([Fixture.manifest, "", Fixture.received], newline: "\r\n"))
        #expect(decoded.error == nil)
        #expect(decoded.records.count == 1)
        #expect(decoded.records[0].line == 3)
        #expect(decoded.records[0].notificationID == "6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10")
        #expect(decoded.records[0].json == Fixture.received)
    }

    @Test("a truncated gzip body is an error, never a shorter bundle")
    func truncatedGzip() {
        let whole = Fixture.gzip([Fixture.manifest, Fixture.received, Fixture.delivered])
        let decoded = Decoded(Array(whole.dropLast(12)))
        #expect(decoded.error?.kind == .undecodable)
        #expect(decoded.error?.message.contains("truncated") == true)
    }

    @Test("a body that is not gzip, sent as gzip")
    func notGzip() {
        let decoded = Decoded(Fixture.text([Fixture.manifest]), encoding: .gzip)
        #expect(decoded.error?.kind == .undecodable)
        #expect(decoded.error?.message.contains("not valid gzip") == true)
    }

    @Test("garbage after a gzip member")
    func garbageAfterMember() {
        let decoded = Decoded(Fixture.gzip([Fixture.manifest]) + Array("junk".utf8))
        #expect(decoded.error?.message.contains("not another gzip member") == true)
    }

    @Test("an empty body", arguments: [ContentEncoding.sniff, .gzip, .identity])
    func empty(encoding: ContentEncoding) {
        let decoded = Decoded([], encoding: encoding)
        #expect(decoded.error?.message.contains("empty") == true)
    }

    @Test("only empty lines: no manifest")
    func noManifest() {
        let decoded = Decoded(Array("\n\r\n\n".utf8))
        #expect(decoded.error?.message.contains("no manifest") == true)
    }

    @Test("the manifest not on line 1")
    func manifestNotFirst() {
        let decoded = Decoded(Fixture.text([Fixture.received, Fixture.manifest]))
        #expect(decoded.error?.line == 1)
        #expect(decoded.error?.message.contains("expected the manifest") == true)
        #expect(decoded.error?.message.contains("`event` record") == true)
    }

    @Test("a manifest without app_id or bundle_id", arguments: ["app_id", "bundle_id"])
    func manifestMissingField(field: String) {
        let manifest = Fixture.manifest.replacingOccurrences(of: "\"\(field)\"", with: "\"x_\(field)\"")
        let decoded = Decoded(Fixture.text([manifest, Fixture.received]))
        #expect(decoded.error?.line == 1)
        #expect(decoded.error?.message == "the manifest lacks `\(field)`")
    }

    @Test("a manifest whose app_id is not a string")
    func manifestWrongType() {
        let manifest = Fixture.manifest.replacingOccurrences(of: #""app_id":"net.rorklab.dailypick""#, with: #""app_id":42"#)
        let decoded = Decoded(Fixture.text([manifest]))
        #expect(decoded.error?.message == "the manifest field `app_id` must be a string")
    }

    @Test("a manifest with invalid UTF-8 refuses the bundle")
    func manifestInvalidUTF8() {
        let decoded = Decoded(Array(#"{"type":"manifest","app_id":"caf"#.utf8) + [0xFF] + Array("\"}\n".utf8))
        #expect(decoded.error?.line == 1)
        #expect(decoded.error?.message == "the manifest has invalid UTF-8 at byte 33 of the line")
    }

    @Test("uploaded_at in seconds refuses the bundle, saying so")
    func uploadedAtSeconds() {
        let manifest = Fixture.manifest.replacingOccurrences(of: "1763622003120", with: "1763622003")
        let decoded = Decoded(Fixture.text([manifest]))
        #expect(decoded.error?.message.contains("`uploaded_at` 1763622003 looks like seconds") == true)
    }

    @Test("invalid UTF-8 rejects that line alone")
    func invalidUTF8() {
        var bytes = Fixture.text([Fixture.manifest])
        bytes += Array(#"{"type":"log","ts":1763622001234,"process":"app","level":"info","message":"caf"#.utf8)
        bytes += [0xC3, 0x28] + Array("\"}\n".utf8)
        bytes += Fixture.text([Fixture.received])
        let decoded = Decoded(bytes)
        #expect(decoded.error == nil)
        #expect(decoded.rejected.count == 1)
        #expect(decoded.rejected[0].line == 2)
        #expect(decoded.rejected[0].reason.contains("invalid UTF-8 at byte 79"))
        #expect(decoded.records.count == 1)
    }

    @Test("a line over the limit is rejected alone, its first bytes kept")
    func lineOverLimit() {
        let long =
            #"{"type":"log","ts":1763622001234,"process":"app","level":"info","message":""#
            + String(repeating: "x", count: 5000) + #""}"#
        let limits = BundleLimits(maxLineBytes: 1024, keptBytesOfLongLine: 100)
        let decoded = Decoded(Fixture.text([Fixture.manifest, long, Fixture.received]), limits: limits, chunk: 300)
        #expect(decoded.error == nil)
        #expect(decoded.rejected.map(\.line) == [2])
        #expect(decoded.rejected[0].raw.count == 100)
        #expect(decoded.rejected[0].reason.contains("over the 1 KiB limit"))
        #expect(decoded.records.map(\.line) == [3])
    }

    @Test("decompressed size over the limit refuses the whole bundle early")
    func decompressedOverLimit() {
        let filler = String(
            repeating: #"{"type":"log","ts":1763622001234,"process":"app","level":"info","message":"zzzz"}"#
                + "\n", count: 20_000)
        let body = Deflater.gzip(Array((Fixture.manifest + "\n" + filler).utf8))
        let decoded = Decoded(body, limits: BundleLimits(maxDecompressedBytes: 1 << 20))
        #expect(body.count < 40_000)
        #expect(decoded.error?.kind == .tooLarge)
        #expect(decoded.error?.message.contains("more than 1 MiB") == true)
    }

    @Test(
        "records that are not objects, or lack fields, or have wrong types, are rejected alone",
        arguments: [
            (#"[1,2,3]"#, "is a JSON array, not a JSON object"),
            (#""hello""#, "is a JSON string, not a JSON object"),
            (#"42"#, "is a JSON number, not a JSON object"),
            (
                #"{"type":"event","ts":"1763622001234","process":"app","event":"app.response","notification_id":"n1","action":"a"}"#,
                "field `ts` must be an integer"
            ),
            (
                #"{"type":"event","ts":1763622001234,"process":"service","event":"service.delivered","notification_id":"n1","elapsed_ms":"400"}"#,
                "field `elapsed_ms` must be an integer"
            ),
            (
                #"{"type":"event","ts":1763622001234,"process":"service","event":"service.delivered","notification_id":"n1"}"#,
                "`service.delivered` lacks `elapsed_ms`"
            ),
            (
                #"{"type":"event","process":"service","event":"service.received"}"#,
                "`service.received` lacks `ts`, `notification_id`"
            ),
            (#"{"ts":1763622001234,"process":"app"}"#, "lacks `type` (event, log or config)"),
            (
                #"{"type":"event","ts":1763622001,"process":"app","event":"app.response","notification_id":"n1","action":"a"}"#,
                "`ts` 1763622001 looks like seconds, not milliseconds"
            ),
            (
                #"{"type":"event","ts":1763622001234,"process":"widget","event":"x.y","notification_id":"n1"}"#,
                "`process` is \"widget\""
            ),
            (#"{"type":"manifest","app_id":"a","bundle_id":"b"}"#, "a second manifest"),
            (#"{"type":"event","ts":1763622001234,"#, "is not valid JSON"),
        ])
    func rejectedLine(line: String, reason: String) {
        let decoded = Decoded(Fixture.text([Fixture.manifest, line, Fixture.received]))
        #expect(decoded.error == nil)
        #expect(decoded.rejected.count == 1)
        #expect(decoded.rejected.first?.line == 2)
        #expect(decoded.rejected.first?.reason.contains(reason) == true, "\(decoded.rejected.first?.reason ?? "nil")")
        #expect(decoded.rejected.first?.raw == Array(line.utf8))
        #expect(decoded.records.count == 1)
    }

    @Test("unknown fields, event names and record types are kept")
    func unknownsKept() {
        let lines = [
            Fixture.manifest,
            #"{"type":"event","ts":1763622001234,"process":"service","event":"service.future_step","notification_id":"n1","shiny":true}"#,
            #"{"type":"metric","ts":1763622001234,"name":"battery","value":0.5}"#,
            #"{"type":"event","ts":1763622001234,"process":"service","event":"service.received","notification_id":"n1","extra":{"a":[1]}}"#,
        ]
        let decoded = Decoded(Fixture.text(lines))
        #expect(decoded.rejected.isEmpty)
        #expect(decoded.records.count == 3)
        #expect(decoded.records[0].json.contains("shiny"))
    }

    @Test("a deflate body, zlib-wrapped or raw")
    func deflate() throws {
        // zlib stream of the manifest line, made with Python's zlib.compress.
        let gz = Fixture.gzip([Fixture.manifest, Fixture.received])
        // A gzip member's deflate payload starts after the 10-byte header and ends before the 8-byte trailer.
        let raw = Array(gz[10..<(gz.count - 8)])
        let decoded = Decoded(raw, encoding: .deflate)
        #expect(decoded.error == nil)
        #expect(decoded.records.count == 1)
    }
}
