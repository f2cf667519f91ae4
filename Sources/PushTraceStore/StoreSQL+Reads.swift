import PushTraceCore

/// The interface's reads (``TraceReader``, ``TokenStore``), written once: ``SQLStore`` answers each engine's from these.
extension StoreSQL {
    /// The apps that have notifications, in order.
    package func appIDs() async throws -> [String] {
        try await awaiting(.readOne) { try await AppRows.all($0) }
    }

    /// The apps that have records for a notification ID (normally one).
    package func apps(forNotification id: String) async throws -> [String] {
        try await awaiting(.readOne) { try await AppRows.storing(notification: NotificationKey.normalize(id), $0) }
    }

    /// The answer to `why` for one notification of one app (an `unknown_notification` answer when nothing is
    /// stored). Read with two statements on one session (``BlockReading/input(appID:notificationID:)``): the blocks
    /// and last-seen times, then the config in force, which the first event's time picks; a config record committed
    /// in between may be taken, as it would by a why a moment later. A notification whose device none of its bundles
    /// names (a `push.sent` alone) is read again in one snapshot, statement by statement.
    package func why(appID: String, notificationID: String, settings: DiagnosisSettings) async throws -> WhyReport {
        let key = NotificationKey.normalize(notificationID)
        let input: DiagnosisInput
        if let read = try await awaiting(.readOne, { try await blocks($0).input(appID: appID, notificationID: key) }) {
            input = read
        } else {
            input = try await awaiting(.read) { session in
                let reader = blocks(session)
                let lines = try await reader.lines(appID: appID, notificationID: key)
                return try await reader.input(appID: appID, notificationID: key, lines: lines, cut: reader.cut)
            }
        }
        return WhyReport(input: input, diagnosis: Diagnoser(settings: settings).diagnose(input))
    }

    /// The `log` records of one notification from every process, in time order: one statement, one snapshot.
    package func logs(appID: String, notificationID: String) async throws -> [TimelineEntry] {
        let key = NotificationKey.normalize(notificationID)
        return try await awaiting(.readOne) {
            DiagnosisAssembly.entries(try await blocks($0).lines(appID: appID, notificationID: key), type: "log")
        }
    }

    /// Every accepted line `filter` selects, in the order stored, one at a time, in one snapshot.
    package func export(_ filter: ExportFilter, _ line: (ExportedLine) throws -> Void) throws {
        try reading { try await blocks($0).export(filter, line) }
    }

    /// Every block read back and what the store keeps about its lines recounted (``BlockReading/check(summarized:)``),
    /// in one snapshot, so a server may go on writing.
    package func check() throws -> StoreCheck {
        try reading { try blocks($0).check(summarized: layout.summarized) }
    }

    package func search(_ query: SearchQuery) async throws -> [NotificationSummary] {
        try await awaiting(.read) { try await $0.search(query) }
    }

    package func causeCounts(since: Int64) async throws -> [CauseCount] {
        try await awaiting(.read) { try await $0.causeCounts(since: since) }
    }

    /// What app `appID` is configured with (``ConfigurationReading/latest(appID:_:dictionaries:)``); nil when no
    /// config record of that app is stored.
    package func latestConfiguration(appID: String) async throws -> AppConfiguration? {
        try await awaiting(.read) { try await ConfigurationReading.latest(appID: appID, $0, dictionaries: dictionary($0)) }
    }

    /// The delivery report of one app for `period` against the period before it, from the rollups (a few thousand
    /// rows whatever the number of notifications), in one snapshot. Only settled notifications count.
    package func report(appID: String, period: ReportPeriod) async throws -> DeliveryReport {
        DeliveryReport(
            try await awaiting(.read) { try await ReportReading.input($0, appID: appID, period: period, dictionaries: dictionary($0)) })
    }

    /// The alert rules judged as of `now` (epoch milliseconds): notifications first seen after `now` are ignored.
    /// With `appID`, only that app's samples are judged and counted (what a read token of one app may see).
    /// Every sample is read in one snapshot.
    package func alerts(_ rules: [AlertRule], now: Int64, appID: String?) async throws -> AlertReport {
        try await awaiting(.read) { session in
            try await RollupReading.alerts(
                rules, now: now, appID: appID, samples: { try await RollupReading.alertSamples($0, session) },
                audience: { try await audienceSamples($0, appID: $1, session) })
        }
    }

    /// Counts per app and category over settled notifications (``RollupReading/alertSamples(_:_:)``), in one
    /// snapshot.
    package func alertSamples(_ spans: AlertSpans) throws -> [AlertSample] {
        try reading { try await RollupReading.alertSamples(spans, $0) }
    }

    /// The `notifications_disabled` metric's samples per app (``AudienceReading/alertSamples(_:apps:spans:dictionaries:)``),
    /// in one snapshot.
    package func audienceSamples(_ spans: AlertSpans, appID: String?) throws -> [AlertSample] {
        try reading { try await audienceSamples(spans, appID: appID, $0) }
    }

    private func audienceSamples(_ spans: AlertSpans, appID: String?, _ session: Session) async throws -> [AlertSample] {
        let apps: [String]
        if let appID { apps = [appID] } else { apps = try await AppRows.all(session) }
        return try await AudienceReading.alertSamples(session, apps: apps, spans: spans, dictionaries: dictionary(session))
    }

    package func audiences(period: ReportPeriod) async throws -> [String: AudienceFigures] {
        try await awaiting(.read) {
            try await AudienceReading.figures($0, apps: AppRows.all($0), period: period, dictionaries: dictionary($0))
        }
    }

    // Tokens: a token is read on every authenticated request, each by one statement.

    /// Creates a token and returns its text: the only time the secret exists outside the client.
    package func createToken(appID: String?, scope: TokenScope, label: String?, now: Int64) async throws -> (TokenInfo, TokenText) {
        try await awaiting(.write) { try await TokenRows.create(appID: appID, scope: scope, label: label, now: now, $0) }
    }

    /// Every token, revoked ones included, oldest first.
    package func tokens() async throws -> [TokenInfo] {
        try await awaiting(.readOne) { try await TokenRows.all($0) }
    }

    /// Revokes a token by its ID; false when no such token exists.
    package func revokeToken(id: String, now: Int64) async throws -> Bool {
        try await awaiting(.write) { try await TokenRows.revoke(id: id, now: now, $0) }
    }

    package func storedToken(id: String) async throws -> StoredToken? {
        try await awaiting(.readOne) { try await TokenRows.stored(id: id, $0) }
    }
}
