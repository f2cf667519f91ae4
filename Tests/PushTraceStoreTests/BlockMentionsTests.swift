import PushTraceStore
import Testing

/// The cheap test that skips lines before they are parsed: it may keep a line that is not the notification's (the
/// parser then decides), never skip one that is.
@Suite("Record blocks: which lines mention a notification, found without parsing")
struct BlockMentionsTests {
    static let id = "6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"

    @Test("the prefilter keeps every line the parser could give this notification, and skips plainly other ones")
    func prefilter() {
        let needle = Array(Self.id.utf8)
        func keeps(_ line: String) -> Bool { BlockMentions.mayMention(line, needle) }
        #expect(keeps(#"{"type":"event","notification_id":"6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10","ts":1}"#))
        #expect(keeps(#"{"type":"event","notification_id":"6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10"}"#))
        #expect(keeps(#"{"type":"event", "notification_id" : "6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"}"#))
        #expect(keeps(#"{"notification_id":"other","notification_id" :"6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"}"#))
        #expect(keeps(#"{"notification_id":"\u0036f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"}"#))
        #expect(!keeps(#"{"type":"event","notification_id":"7f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"}"#))
        #expect(!keeps(#"{"type":"event","notification_id":"6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10-2"}"#))
        #expect(!keeps(#"{"type":"log","message":"no id here"}"#))
    }

    @Test("a block's mentions, found once: each notification's lines, and every line only the parser can judge")
    func mentions() {
        let other = "7f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10"
        let lines = [
            #"{"type":"event","notification_id":"\#(Self.id)","ts":1}"#,
            #"{"type":"event","notification_id":"\#(other)","ts":2}"#,
            #"{"type":"log","message":"nothing"}"#,
            #"{"type":"event","notification_id":"\#(Self.id.uppercased())","ts":3}"#,
            #"{"type":"event", "notification_id" : "\#(other)"}"#,
            #"{"type":"log","message":"a\nb","notification_id":"\#(other)"}"#,
        ]
        let mentions = BlockMentions(lines)
        #expect(mentions.lines(mentioning: BlockMentions.folded(Array(Self.id.utf8))) == [0, 3, 4, 5])
        #expect(mentions.lines(mentioning: BlockMentions.folded(Array(other.uppercased().utf8))) == [1, 4, 5])
        #expect(mentions.lines(mentioning: Array("n-9".utf8)) == [4, 5])
    }
}
