import Foundation
import PushTraceCore
import PushTraceRecords

/// What an app is configured with (`pushtrace lint`), read the same in every engine: the latest config record of
/// each process on any of the app's devices (docs/protocol.md#config-records).
package enum ConfigurationReading {
    /// The categories the app registers, those its content extension handles, whether it has a service extension;
    /// nil when no config record of `appID` is stored. Of two records at one time, the greater device ID's wins, in
    /// byte order on every engine.
    package static func latest(
        appID: String, _ session: some SQLSession, dictionaries: (UInt32) -> [UInt8]?
    ) async throws -> AppConfiguration? {
        var latest: [ProcessKind: Record] = [:]
        for process in [ProcessKind.app, .service, .content] {
            guard
                let body = try await session.rows(
                    """
                    SELECT b.body FROM config c JOIN config_body b ON b.id = c.body_ref
                    WHERE c.app_id = \(appID) AND c.process = \(process.rawValue)
                    ORDER BY c.ts DESC, c.device_id \(unsafeRaw: session.dialect.byteOrder) DESC LIMIT 1
                    """
                ).first?.decode("body", as: SQLValue.self), body != .null
            else { continue }
            let line = try ConfigBody.text(stored: body, dictionaries: dictionaries)
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            latest[process] = Record(jsonObject: object)
        }
        guard !latest.isEmpty else { return nil }
        return AppConfiguration(
            registeredCategories: latest[.app]?.categories?.map(\.id),
            contentCategories: latest[.content]?.infoPlist?.categories,
            hasServiceExtension: latest[.service] != nil)
    }
}
