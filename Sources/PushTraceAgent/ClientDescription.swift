import Foundation

/// What every manifest says of the app and device that sent it, found by the agent itself, so that the report's
/// per-version tables fill without the app passing anything (``UploaderConfiguration``).
enum ClientDescription {
    /// `CFBundleShortVersionString`: an extension's must equal its app's, so every process reports the same.
    static func appVersion(_ info: [String: Any]?) -> String? {
        (info?["CFBundleShortVersionString"] as? String).flatMap(nonEmpty)
    }

    /// `CFBundleVersion`.
    static func build(_ info: [String: Any]?) -> String? {
        (info?["CFBundleVersion"] as? String).flatMap(nonEmpty)
    }

    /// The system and its version, e.g. `iOS 18.1` (`ProcessInfo`, which needs no UIKit and no main thread).
    static var os: String {
        #if targetEnvironment(macCatalyst)
            let name = "macOS"
        #elseif os(iOS)
            let name = "iOS"
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

    /// The hardware model, e.g. `iPhone15,2`: `uname`'s machine, or the simulated model in the Simulator (whose
    /// machine is the Mac's `arm64`).
    static var deviceModel: String? {
        if let simulated = ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"], !simulated.isEmpty {
            return simulated
        }
        var system = utsname()
        guard uname(&system) == 0 else { return nil }
        let machine = withUnsafeBytes(of: &system.machine) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return nonEmpty(machine)
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }
}
