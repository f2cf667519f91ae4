import Logging
import PushTraceRecords

/// A log handler that escapes control characters in every message and metadata value before another handler
/// writes them: a device's `app_id` or a query parameter holding a newline and `ESC[…` shows as `\n\e[…` instead
/// of forging a log line or recolouring the operator's terminal.
public struct EscapingLogHandler: LogHandler {
    private var wrapped: any LogHandler

    public init(_ wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = Self.escaped(newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: TerminalText.escaped(key)] = newValue.map(Self.escaped) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = "\(TerminalText.escaped(event.message.description))"
        event.metadata = event.metadata.map(Self.escaped)
        event.error = event.error.map { EscapedError(description: TerminalText.escaped(String(describing: $0))) }
        wrapped.log(event: event)
    }

    /// An error as its escaped description: what a handler prints of it cannot forge a line either.
    private struct EscapedError: Error, CustomStringConvertible {
        let description: String
    }

    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        // Two keys may escape to the same text (`a\n` and a literal `a\\n`): the first is kept rather than trapping.
        Dictionary(metadata.map { (TerminalText.escaped($0.key), escaped($0.value)) }, uniquingKeysWith: { first, _ in first })
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(TerminalText.escaped(text))
        case .stringConvertible(let convertible): return .string(TerminalText.escaped(convertible.description))
        case .array(let values): return .array(values.map(escaped))
        case .dictionary(let values): return .dictionary(escaped(values))
        }
    }
}
