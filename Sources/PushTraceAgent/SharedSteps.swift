import Foundation
import PushTraceRecords

/// Shared state between the processes through an App Group suite (docs/protocol.md#events `shared.write` / `shared.read`): what
/// shows an App Group name that drifted between targets, or a card dismissed before the save it triggered showed.
public struct SharedSteps: Sendable {
    let recorder: Recorder

    /// Wrote `key` to suite `suite`, for notification `notificationID` if the write was about one.
    public func write(suite: String, key: String? = nil, notificationID: String? = nil) {
        recorder.record(
            type: .event,
            [
                ("event", .string(EventName.sharedWrite.rawValue)),
                ("notification_id", notificationID.map(JSONValue.string)),
                ("suite", .string(suite)), ("key", key.map(JSONValue.string)),
            ])
    }

    /// Read `key` from suite `suite`; `found` says whether it held a value.
    public func read(suite: String, key: String? = nil, found: Bool, notificationID: String? = nil) {
        recorder.record(
            type: .event,
            [
                ("event", .string(EventName.sharedRead.rawValue)),
                ("notification_id", notificationID.map(JSONValue.string)),
                ("suite", .string(suite)), ("key", key.map(JSONValue.string)), ("found", .bool(found)),
            ])
    }
}

extension Recorder {
    /// Shared-state steps.
    public var shared: SharedSteps { SharedSteps(recorder: self) }
}

/// `UserDefaults(suiteName:)` that records every write and read it makes: use it in place of the suite the app and
/// its extensions share.
public struct RecordedDefaults: @unchecked Sendable {
    /// The App Group suite name.
    public let suite: String
    /// The underlying defaults.
    public let defaults: UserDefaults
    private let recorder: Recorder

    /// The suite `suite`, or nil when `UserDefaults` refuses the name.
    public init?(suite: String, recorder: Recorder) {
        guard let defaults = UserDefaults(suiteName: suite) else { return nil }
        self.suite = suite
        self.defaults = defaults
        self.recorder = recorder
    }

    /// Stores `value` under `key` and records the write.
    public func set(_ value: Any?, forKey key: String, notificationID: String? = nil) {
        defaults.set(value, forKey: key)
        recorder.shared.write(suite: suite, key: key, notificationID: notificationID)
    }

    /// The value under `key`, recording whether there was one.
    public func object(forKey key: String, notificationID: String? = nil) -> Any? {
        let value = defaults.object(forKey: key)
        recorder.shared.read(suite: suite, key: key, found: value != nil, notificationID: notificationID)
        return value
    }
}
