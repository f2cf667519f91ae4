import Logging
import NIOConcurrencyHelpers

/// Every line logged through its handlers, from any thread: the message, the logger's metadata with the line's, and
/// the error logged with it.
final class LogCapture: Sendable {
    struct Line {
        var message: String
        var metadata: Logger.Metadata
        var error: String?
    }

    private let kept = NIOLockedValueBox<[Line]>([])
    var lines: [Line] { kept.withLockedValue { $0 } }

    func handler() -> Handler { Handler(capture: self) }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let line = Line(
                message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 },
                error: event.error.map { String(describing: $0) })
            capture.kept.withLockedValue { $0.append(line) }
        }
    }
}
