// The unified log, as the agent writes to it: `Logger` (iOS 14+) with string interpolation and privacy options.
@available(iOS 14.0, macOS 11.0, *)
public struct OSLogPrivacy: Sendable {
    public static let auto = OSLogPrivacy()
    public static let `public` = OSLogPrivacy()
    public static let `private` = OSLogPrivacy()
}

@available(iOS 14.0, macOS 11.0, *)
public struct OSLogInterpolation: StringInterpolationProtocol {
    public init(literalCapacity: Int, interpolationCount: Int) {}
    public mutating func appendLiteral(_ literal: String) {}
    public mutating func appendInterpolation(_ argumentString: @autoclosure @escaping () -> String, privacy: OSLogPrivacy = .auto) {}
    public mutating func appendInterpolation<T: BinaryInteger>(_ number: @autoclosure @escaping () -> T, privacy: OSLogPrivacy = .auto) {}
    public mutating func appendInterpolation<T: CustomStringConvertible>(
        _ value: @autoclosure @escaping () -> T,
        privacy: OSLogPrivacy = .auto
    ) {}
}

@available(iOS 14.0, macOS 11.0, *)
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    public init(stringInterpolation: OSLogInterpolation) {}
    public init(stringLiteral value: String) {}
}

@available(iOS 14.0, macOS 11.0, *)
public struct Logger: @unchecked Sendable {
    public init(subsystem: String, category: String) {}
    public func debug(_ message: OSLogMessage) {}
    public func info(_ message: OSLogMessage) {}
    public func notice(_ message: OSLogMessage) {}
    public func error(_ message: OSLogMessage) {}
    public func fault(_ message: OSLogMessage) {}
}
