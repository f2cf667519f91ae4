import Foundation
import PushTraceRecords

/// What a launch is in the middle of: the notifications it has begun and not finished, kept in a small file per
/// launch (`state/inflight-<launch>.json`, one JSON line per notification) rewritten in place with each change.
///
/// When a launch ends with notifications still listed (iOS killed it over its memory limit, or it crashed), the next
/// recorder to start records a `*.abnormal_exit` for each of them. A launch that is still alive (another process of
/// the same kind, or this one) is never judged.
struct InFlightMarker {
    struct Entry: Codable, Equatable {
        var notificationID: String
        /// The process's memory footprint when the entry was last written.
        var footprintBytes: Int64?
        var since: Int64

        enum CodingKeys: String, CodingKey {
            case notificationID = "notification_id", footprintBytes = "footprint_bytes", since
        }
    }

    /// The launch that wrote it.
    var launch: String
    var process: ProcessKind
    var entries: [Entry]

    static let prefix = "inflight-"

    static func url(launch: String, in container: AgentContainer) -> URL {
        container.state.appendingPathComponent("\(prefix)\(launch).json")
    }

    /// Takes the markers of launches that have ended, removing them: each is claimed by renaming it first, so two
    /// recorders starting at once never both report it.
    static func claimEnded(in container: AgentContainer, by claimant: String, staleAfter: TimeInterval) -> [InFlightMarker] {
        container.files(in: container.state).compactMap { name -> InFlightMarker? in
            guard name.hasPrefix(prefix), name.hasSuffix(".json") else { return nil }
            let launch = String(name.dropFirst(prefix.count).dropLast(".json".count))
            // Markers of earlier versions were named inflight-<process>-<launch>.json.
            let owner = Launch.process(of: launch) != nil ? launch : String(launch.drop { $0 != "-" }.dropFirst())
            guard owner != claimant, let process = Launch.process(of: owner) else { return nil }
            let url = container.state.appendingPathComponent(name)
            // An empty marker reports nothing, so it is only tidied away once its launch is surely over; one with
            // notifications in it is judged as the launch's files are.
            let empty = FileManager.default.fileExists(atPath: url.path) && (try? Data(contentsOf: url))?.isEmpty == true
            guard Launch.hasEnded(owner, touched: url, staleAfter: empty ? 86_400 : staleAfter) else { return nil }
            let claimed = container.state.appendingPathComponent(".claimed-\(claimant)-\(name)")
            guard (try? FileManager.default.moveItem(at: url, to: claimed)) != nil else { return nil }
            defer { try? FileManager.default.removeItem(at: claimed) }
            let data = (try? Data(contentsOf: claimed)) ?? Data()
            let entries = data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONDecoder().decode(Entry.self, from: Data($0)) }
            return entries.isEmpty ? nil : InFlightMarker(launch: owner, process: process, entries: entries)
        }
    }

    /// The file's contents for `entries`.
    static func encode(_ entries: some Collection<Entry>) -> [UInt8] {
        entries.flatMap { entry in
            JSONLine([
                "notification_id": .string(entry.notificationID), "footprint_bytes": entry.footprintBytes.map(JSONValue.int),
                "since": .int(entry.since),
            ]).bytes + [UInt8(ascii: "\n")]
        }
    }
}
