import PushTraceStore
import Testing

@testable import PushTraceSQLite
@testable import PushTraceServer

/// The acknowledgement written directly is the text the JSON encoder gives, escapes or not.
@Suite struct AcknowledgementTextTests {
    static let results: [IngestResult] = [
        IngestResult(
            appID: "com.example.app", bundleID: "b-1", accepted: 12, rejected: 0, duplicate: false, rejections: [],
            clockOffsetMs: -1_250),
        IngestResult(
            appID: "com.example.app", bundleID: "9F1C/é", accepted: 0, rejected: 0, duplicate: true, rejections: [],
            clockOffsetMs: 0),
        IngestResult(
            appID: "com.example.app", bundleID: "b-2", accepted: 3, rejected: 2, duplicate: false,
            rejections: [.init(line: 4, reason: "`ts` is not an integer"), .init(line: 9, reason: "not JSON")],
            clockOffsetMs: 17),
        IngestResult(
            appID: "app \"quoted\"", bundleID: "tab\there\\", accepted: 1, rejected: 1, duplicate: false,
            rejections: [.init(line: 2, reason: "line \"2\"\n")], clockOffsetMs: 5),
    ]

    @Test(arguments: results) func matchesTheEncodersText(_ result: IngestResult) {
        #expect(result.jsonText == result.jsonValue.jsonText(pretty: false))
    }
}
