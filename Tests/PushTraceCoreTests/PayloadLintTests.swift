import PushTraceCore
import Testing

@Suite("Core: payload lint")
struct PayloadLintTests {
    static let app = AppConfiguration(
        registeredCategories: ["DAILY_PICK", "STREAK_REMINDER"],
        contentCategories: ["DAILY_PICK"], hasServiceExtension: true)

    static func codes(_ json: String, app: AppConfiguration? = Self.app) throws -> [String] {
        try PayloadLint.check(Array(json.utf8), app: app).map(\.code)
    }

    @Test("a good payload has no findings")
    func clean() throws {
        #expect(
            try Self.codes(
                #"{"aps":{"alert":{"title":"Pick","body":"New"},"category":"DAILY_PICK","mutable-content":1},"image-url":"https://cdn.example.com/a/pick.JPG?v=2"}"#
            ) == [])
    }

    @Test("each mistake is found, with the cause it would produce and its fix")
    func mistakes() throws {
        #expect(try Self.codes(#"{"aps":{"category":"DAILY_PICK","mutable-content":1}}"#) == ["alert_missing"])
        #expect(try Self.codes(#"{"aps":{"alert":"hi","category":"DAILY_PICK"}}"#) == ["mutable_content_missing"])
        // Without a stored configuration, an attachment URL still needs the service extension to run.
        #expect(try Self.codes(#"{"aps":{"alert":"hi"},"media-url":"https://x.example/a.png"}"#, app: nil) == ["mutable_content_missing"])
        let unregistered = try PayloadLint.check(
            Array(#"{"aps":{"alert":"hi","category":"DAILY_PIK","mutable-content":1}}"#.utf8), app: Self.app)
        #expect(unregistered.map(\.code) == ["category_unregistered"])
        #expect(unregistered.first?.message.contains("nearest: 'DAILY_PICK'") == true)
        #expect(unregistered.first?.severity == .error && unregistered.first?.fix.isEmpty == false)
        #expect(try Self.codes(#"{"aps":{"alert":"hi","category":"STREAK_REMINDER","mutable-content":1}}"#) == ["category_not_handled"])
        #expect(
            try Self.codes(#"{"aps":{"alert":"hi","mutable-content":1},"data":{"image_url":"https://x.example/img/8812"}}"#)
                == ["category_missing", "attachment_failed"])
        #expect(
            try Self.codes(#"{"aps":{"alert":"hi","category":"DAILY_PICK","mutable-content":1},"image":"https://x.example/a.webp"}"#)
                == ["attachment_failed"])
        let big = String(repeating: "x", count: 4_100)
        #expect(try Self.codes(#"{"aps":{"alert":"\#(big)","category":"DAILY_PICK","mutable-content":1}}"#) == ["payload_too_large"])
    }

    @Test("not a payload: an error that says why")
    func notAPayload() {
        #expect(throws: LintInputError.self) { try PayloadLint.check(Array("[1]".utf8), app: nil) }
        do {
            _ = try PayloadLint.check(Array(#"{"alert":"hi"}"#.utf8), app: nil)
            Issue.record("a payload without aps was accepted")
        } catch {
            #expect(error.message.contains("aps"))
        }
    }
}
