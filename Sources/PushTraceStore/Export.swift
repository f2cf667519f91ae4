import PushTraceCore
import PushTraceRecords

/// Which stored lines `pushtrace export` reads back.
public struct ExportFilter: Sendable, Equatable {
    public var appID: String?
    /// Lines whose corrected time is at or after this (epoch ms); lines without a time are left out by a time bound.
    public var since: Int64?
    /// Lines whose corrected time is before this.
    public var until: Int64?
    /// Only the lines of this notification (any spelling of its ID: it is normalized as stored).
    public var notificationID: String?

    public init(appID: String? = nil, since: Int64? = nil, until: Int64? = nil, notificationID: String? = nil) {
        self.appID = appID
        self.since = since
        self.until = until
        self.notificationID = notificationID
    }

    /// Whether a line stored under `correctedTs` is within the time bounds.
    package func includes(correctedTs ts: Int64?) -> Bool {
        if let since, (ts ?? .min) < since { return false }
        if let until, (ts ?? .max) >= until { return false }
        return true
    }
}

/// One stored line: exactly as it was received, and the time it is stored under (the device's time corrected by
/// its bundle's clock offset), when it has one.
public struct ExportedLine: Sendable {
    public var body: String
    public var correctedTs: Int64?

    package init(body: String, correctedTs: Int64?) {
        self.body = body
        self.correctedTs = correctedTs
    }
}

extension BlockReading {
    /// Every accepted line that `filter` selects, in the order stored, handed to `line` one at a time: memory stays
    /// bounded (a page of blocks at a time) however many there are. The caller's snapshot makes them those of one
    /// moment.
    package func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) async throws {
        if let id = filter.notificationID {
            // Through the index: a notification's lines are in a few blocks of each app that mentions it.
            let key = NotificationKey.normalize(id)
            var found: [StoredLine] = []
            let apps: [String]
            if let app = filter.appID { apps = [app] } else { apps = try await AppRows.uploading(session) }
            for app in apps {
                found += try await lines(appID: app, notificationID: key).filter { filter.includes(correctedTs: $0.ts) }
            }
            for stored in found.sorted(by: { ($0.block, $0.index) < ($1.block, $1.index) }) {
                try line(ExportedLine(body: stored.body, correctedTs: stored.ts))
            }
            return
        }
        // With a time range, only the blocks of bundles whose time span meets it are decoded.
        try await forEachBlock(appID: filter.appID, since: filter.since, until: filter.until) { block in
            try reader.forEachLineTime(of: block) { body, ts in
                if filter.includes(correctedTs: ts) { try line(ExportedLine(body: body, correctedTs: ts)) }
            }
        }
    }
}
