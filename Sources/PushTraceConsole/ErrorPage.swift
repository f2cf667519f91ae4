/// A page that says what was wrong with a request (an unknown notification, another app's, a malformed week) in
/// plain words, with a way back; never a stack trace.
public struct ErrorPage: Sendable {
    var heading: String
    var message: String
    var requestID: String?
    var back: String
    var backLabel: String

    public init(
        heading: String, message: String, requestID: String? = nil, back: String = "/ui/", backLabel: String = "Back to the overview"
    ) {
        self.heading = HTMLText.visible(heading)
        self.message = HTMLText.visible(message)
        self.requestID = requestID
        self.back = back
        self.backLabel = backLabel
    }
}
