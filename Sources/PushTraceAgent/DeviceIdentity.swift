import Foundation

/// The device's pushtrace ID (`d-` and 12 hex digits), made once and kept in `state/device_id`: stable per app
/// install, and unrelated to any Apple identifier.
enum DeviceIdentity {
    static func id(in container: AgentContainer) -> String {
        let url = container.state.appendingPathComponent("device_id")
        if let saved = try? String(contentsOf: url, encoding: .utf8), saved.hasPrefix("d-") { return saved }
        let id = "d-" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try? Data(id.utf8).writeProtected(to: url)
        return id
    }
}
