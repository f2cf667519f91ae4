import Foundation

#if canImport(Darwin)
    import Darwin
#endif

/// What every manifest says of the app and device that sent it, found by the agent itself, so that the report's
/// per-version tables fill without the app passing anything (``UploaderConfiguration``).
enum ClientDescription {
    /// `CFBundleShortVersionString`: Xcode warns when an extension's differs from its app's, so every process
    /// normally reports the same.
    static func appVersion(_ info: [String: Any]?) -> String? {
        (info?["CFBundleShortVersionString"] as? String).flatMap(nonEmpty)
    }

    /// `CFBundleVersion`.
    static func build(_ info: [String: Any]?) -> String? {
        (info?["CFBundleVersion"] as? String).flatMap(nonEmpty)
    }

    /// The system and its version, e.g. `iOS 18.1` (`ProcessInfo`, which needs no UIKit and no main thread). iPadOS
    /// reports as `iOS` (the same versions); an iPhone or iPad app on a Mac as `macOS`.
    static var os: String {
        #if targetEnvironment(macCatalyst)
            let name = "macOS"
        #elseif os(iOS)
            let name = ProcessInfo.processInfo.isiOSAppOnMac ? "macOS" : "iOS"
        #elseif os(macOS)
            let name = "macOS"
        #elseif os(watchOS)
            let name = "watchOS"
        #elseif os(tvOS)
            let name = "tvOS"
        #elseif os(visionOS)
            let name = "visionOS"
        #else
            let name = "Linux"
        #endif
        let version = ProcessInfo.processInfo.operatingSystemVersion
        let patch = version.patchVersion > 0 ? ".\(version.patchVersion)" : ""
        return "\(name) \(version.majorVersion).\(version.minorVersion)\(patch)"
    }

    /// The hardware model, e.g. `iPhone15,2`: `uname`'s machine on a device; the simulated model in the Simulator,
    /// and `hw.model` on a Mac (e.g. `Mac14,2`), where the machine is only the processor's `arm64`.
    static var deviceModel: String? {
        #if targetEnvironment(simulator)
            if let simulated = ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"], !simulated.isEmpty {
                return simulated
            }
        #endif
        #if targetEnvironment(macCatalyst) || os(macOS)
            return sysctlString("hw.model")
        #else
            #if os(iOS)
                if ProcessInfo.processInfo.isiOSAppOnMac { return sysctlString("hw.model") }
            #endif
            return machine
        #endif
    }

    #if canImport(Darwin)
        /// A string of `sysctl`'s, or nil.
        static func sysctlString(_ name: String) -> String? {
            var size = 0
            guard sysctlbyname(name, nil, &size, nil, 0) == 0, size > 0 else { return nil }
            var bytes = [UInt8](repeating: 0, count: size)
            guard sysctlbyname(name, &bytes, &size, nil, 0) == 0 else { return nil }
            return nonEmpty(String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
        }
    #endif

    /// `uname`'s machine.
    private static var machine: String? {
        var system = utsname()
        guard uname(&system) == 0 else { return nil }
        let machine = withUnsafeBytes(of: &system.machine) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return nonEmpty(machine)
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }
}
