import Foundation
import PushTraceRecords

/// The Notification Content Extension's steps (docs/protocol.md#events): `recorder.content.received(…)`.
///
/// `received` marks the notification in flight until the card is ready (`image` or `ready`): if the process dies in
/// between (often an oversized image in the memory-limited extension), the next recorder to start records
/// `content.abnormal_exit` for it.
public struct ContentSteps: Sendable {
    let recorder: Recorder

    /// `didReceive(_ notification:)`: records `content.received` and returns the card's handle.
    public func begin(_ notificationID: String, category: String? = nil) -> ContentCard {
        received(notificationID, category: category)
        return ContentCard(steps: self, notificationID: notificationID)
    }

    /// `didReceive(_ notification:)`: the user expanded the notification.
    public func received(_ notificationID: String, category: String? = nil) {
        recorder.beginWork(on: notificationID)
        recorder.event(.contentReceived, notificationID: notificationID, ["category": category.map(JSONValue.string)])
    }

    /// The card's image was decoded and shown.
    public func image(
        _ notificationID: String, pixelWidth: Int? = nil, pixelHeight: Int? = nil, bytes: Int64? = nil,
        decodeMs: Int64? = nil
    ) {
        recorder.event(
            .contentImage, notificationID: notificationID,
            [
                "pixel_width": pixelWidth.map { .int(Int64($0)) }, "pixel_height": pixelHeight.map { .int(Int64($0)) },
                "bytes": bytes.map(JSONValue.int), "decode_ms": decodeMs.map(JSONValue.int),
            ])
        recorder.endWork(on: notificationID)
    }

    /// The card is drawn (for a card without an image): ends the work `received` began. Records nothing.
    public func ready(_ notificationID: String) {
        recorder.endWork(on: notificationID)
    }

    /// An action was answered with `response`, `elapsedMs` after the button was tapped.
    public func action(_ notificationID: String, action: String, response: ResponseOption, elapsedMs: Int64? = nil) {
        recorder.event(
            .contentAction, notificationID: notificationID,
            [
                "action": .string(action), "response": .string(response.rawValue), "elapsed_ms": elapsedMs.map(JSONValue.int),
            ])
    }

    /// Wraps the completion handler of `didReceive(_ response:completionHandler:)`: calling the returned handler
    /// records `content.action` with the response option and how long the work took, then calls `completion`; if it
    /// is not called within `timeout` seconds, `content.completion_timeout` is recorded (the card stays stuck until then).
    /// Calls after the first are ignored, as UIKit ignores them.
    public func completion(
        _ notificationID: String, action: String, timeout: TimeInterval = 5,
        _ completion: @escaping @Sendable (ResponseOption) -> Void
    ) -> @Sendable (ResponseOption) -> Void {
        let call = ActionCompletion(recorder: recorder, notificationID: notificationID, action: action)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { call.timedOut() }
        let recorder = recorder
        return { response in
            guard call.complete(response) else { return }
            // A dismissing answer may end the extension at once: its lines are written first.
            recorder.waitUntilWritten()
            completion(response)
        }
    }
}

extension ContentSteps {
    /// The `async` form of an action handler (`didReceive(_ response:) async -> UNNotificationContentExtensionResponseOption`):
    /// runs `work`, records `content.action` with the option it returns and how long it took, and records
    /// `content.completion_timeout` if it takes longer than `timeout` seconds (the card stays stuck meanwhile).
    /// It runs on the caller's actor (the main actor, in a content extension), so `work` may touch the view.
    public func action(
        _ notificationID: String, action: String, timeout: TimeInterval = 5,
        isolation: isolated (any Actor)? = #isolation,
        _ work: () async -> ResponseOption
    ) async -> ResponseOption {
        let call = ActionCompletion(recorder: recorder, notificationID: notificationID, action: action)
        let watchdog = Task.detached {
            try await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1_000_000_000))
            call.timedOut()
        }
        let option = await work()
        watchdog.cancel()
        _ = call.complete(option)
        recorder.waitUntilWritten()  // a dismissing answer may end the extension at once
        return option
    }
}

/// One action's completion: exactly one of "called" and "timed out" is recorded.
final class ActionCompletion: @unchecked Sendable {
    private let recorder: Recorder
    private let notificationID: String
    private let action: String
    private let start = DispatchTime.now()
    private let lock = NSLock()
    private var called = false
    private var reportedTimeout = false

    init(recorder: Recorder, notificationID: String, action: String) {
        self.recorder = recorder
        self.notificationID = notificationID
        self.action = action
    }

    private var elapsedMs: Int64 { Int64((DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000) }

    /// Records the action; false when the handler was already called.
    func complete(_ response: ResponseOption) -> Bool {
        guard
            lock.withLock({ () -> Bool in
                defer { called = true }
                return !called
            })
        else { return false }
        recorder.content.action(notificationID, action: action, response: response, elapsedMs: elapsedMs)
        return true
    }

    func timedOut() {
        guard
            lock.withLock({ () -> Bool in
                guard !called, !reportedTimeout else { return false }
                reportedTimeout = true
                return true
            })
        else { return }
        recorder.event(
            .contentCompletionTimeout, notificationID: notificationID,
            ["action": .string(action), "waited_ms": .int(elapsedMs)])
    }
}

/// One expanded notification in the content extension: the card's steps without passing its ID, and the time its
/// image took to decode measured from when the card began.
public struct ContentCard: Sendable {
    let steps: ContentSteps
    /// The notification's request identifier.
    public let notificationID: String
    private let start = DispatchTime.now()

    init(steps: ContentSteps, notificationID: String) {
        self.steps = steps
        self.notificationID = notificationID
    }

    /// The card's image was decoded and shown (`decodeMs` defaults to the time since the card began).
    public func image(pixelWidth: Int? = nil, pixelHeight: Int? = nil, bytes: Int64? = nil, decodeMs: Int64? = nil) {
        steps.image(
            notificationID, pixelWidth: pixelWidth, pixelHeight: pixelHeight, bytes: bytes,
            decodeMs: decodeMs ?? Int64((DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000))
    }

    /// The card is drawn, without an image.
    public func ready() { steps.ready(notificationID) }

    /// A log line about this notification.
    public func log(_ message: String, level: Recorder.LogLevel = .info) {
        steps.recorder.log(message, level: level, notificationID: notificationID)
    }
}

extension Recorder {
    /// The content extension's steps.
    public var content: ContentSteps { ContentSteps(recorder: self) }
}
