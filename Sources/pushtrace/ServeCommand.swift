import ArgumentParser
import Foundation
import Logging
import NIOCore
import PushTraceConsole
import PushTraceCore
import PushTraceRecords
import PushTraceSQLite
import PushTraceServer
import PushTraceStore

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the ingestion server: bundles and backend events in, why and search out (docs/spec.md §8).",
        discussion: """
            Every setting is a flag or an environment variable; a flag wins. Uploads need a token \
            (pushtrace token create); an upload is answered 200 only after its bundle has committed.

            Endpoints:
              POST /v1/bundles              a bundle (ingest token of its app)
              POST /v1/events               the backend's push.sent / push.apns_response records
              GET  /v1/notifications/ID     the why answer (read token; Accept: text/plain for text)
              GET  /v1/notifications?app=…&cause=…&since=…   search
              GET  /v1/reports/weekly?app=…&week=2026-W46      the weekly delivery report
              GET  /v1/alerts               the alert rules evaluated now
              GET  /metrics                 Prometheus metrics (by app with a metrics or admin token)
              GET  /healthz                 liveness
              GET  /openapi.json            the OpenAPI 3.1 document of these endpoints
              HEAD on every GET endpoint    its GET's status and headers, no body

            Limits on hostile clients (docs/security.md): uploads in progress share a memory budget counted in \
            bytes of what they decode (--upload-budget-mib); one ingest token may run --uploads-per-token at once \
            and hold a quarter of the budget; a request that finds no room waits up to 2 s, then gets 429 with \
            Retry-After. After 10 s, an upload must send at least --min-upload-rate bytes a second over every 10 s, \
            and finish within 300 s.

            Durability: 'normal' (WAL, synchronous=NORMAL) keeps every acknowledged bundle when the process is \
            killed; the last commits before a power loss or kernel crash may be lost. 'full' (synchronous=FULL) \
            also survives power loss, for an fsync per commit; group commit keeps that cost per batch, not per \
            bundle.

            SIGTERM or SIGINT stops accepting, finishes the bundles in flight, and closes the database.

            Examples:
              pushtrace serve --db /var/lib/pushtrace/pushtrace.sqlite --port 8080
              PUSHTRACE_DB=/data/pt.sqlite PUSHTRACE_PORT=9000 pushtrace serve --durability full
              pushtrace serve --no-auth                  # local development only
              pushtrace serve --trusted-proxy 127.0.0.1  # behind deploy/nginx.conf
            """)

    @Option(
        help: ArgumentHelp(
            "The store: an SQLite database file, or a postgres:// URL (env PUSHTRACE_DB; default \(DatabaseOptions.defaultPath)).",
            valueName: "path-or-url"))
    var db: String?

    @Option(help: ArgumentHelp("The address to listen on (env PUSHTRACE_HOST; default \(Self.defaults.host)).", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("The port (env PUSHTRACE_PORT; default \(Self.defaults.port)).", valueName: "port"))
    var port: Int?

    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp(
            """
            A proxy whose X-Forwarded-For names the client in the logs: an address or a CIDR range; repeat it for \
            more (env PUSHTRACE_TRUSTED_PROXIES, comma-separated; default none: the peer is the client).
            """, valueName: "address"))
    var trustedProxies: [String] = []

    @Option(
        help: ArgumentHelp(
            "normal or full (env PUSHTRACE_DURABILITY; default \(Self.defaultDurability.rawValue)); see above.", valueName: "mode"))
    var durability: String?

    @Option(
        help: ArgumentHelp(
            "Refuse a request body larger than this, as received (env PUSHTRACE_MAX_BODY_MIB; default \(Self.defaults.maxBodyBytes >> 20)).",
            valueName: "MiB"))
    var maxBodyMib: Int?

    @Option(
        help: ArgumentHelp(
            "Refuse a bundle that decompresses to more (env PUSHTRACE_MAX_DECOMPRESSED_MIB; default \(Self.defaults.limits.maxDecompressedBytes >> 20)).",
            valueName: "MiB"))
    var maxDecompressedMib: Int?

    @Option(
        help: ArgumentHelp(
            "Reject a line longer than this (env PUSHTRACE_MAX_LINE_KIB; default \(Self.defaults.limits.maxLineBytes >> 10)).",
            valueName: "KiB"))
    var maxLineKib: Int?

    @Option(
        help: ArgumentHelp(
            "Bundles that may wait for the writer before uploads get 429, a quarter of them per ingest token; the writer takes them round robin between tokens (env PUSHTRACE_QUEUE; default \(Self.defaults.queueCapacity)).",
            valueName: "n"))
    var queue: Int?

    @Option(
        help: ArgumentHelp(
            """
            Memory for uploads in progress, in MiB of what they decode; over it, uploads wait briefly, then get 429 \
            (env PUSHTRACE_UPLOAD_BUDGET_MIB; default \(Self.defaults.uploadBudgetBytes >> 20)).
            """, valueName: "MiB"))
    var uploadBudgetMib: Int?

    @Option(
        help: ArgumentHelp(
            "Uploads one ingest token may run at once (env PUSHTRACE_UPLOADS_PER_TOKEN; default \(Self.defaults.uploadsPerToken)).",
            valueName: "n"))
    var uploadsPerToken: Int?

    @Option(
        help: ArgumentHelp(
            """
            Bytes a second an upload must average after its first \(Self.defaults.slowUploadGrace.components.seconds) s, or it \
            is cut off with 408 (env PUSHTRACE_MIN_UPLOAD_RATE; default \(Self.defaults.minUploadBytesPerSecond)).
            """, valueName: "bytes"))
    var minUploadRate: Int?

    @Option(
        help: ArgumentHelp(
            """
            Seconds a commit waits for a lock held by another process before uploads get 503 \
            (env PUSHTRACE_BUSY_TIMEOUT; default \(Int(Self.defaultBusyTimeout))).
            """, valueName: "seconds"))
    var busyTimeout: Double?

    @Option(
        help: ArgumentHelp(
            "trace, debug, info, notice, warning or error (env PUSHTRACE_LOG_LEVEL; default \(Self.defaultLogLevel.rawValue)).",
            valueName: "level"))
    var logLevel: String?

    @Option(
        help: ArgumentHelp(
            "A YAML file of alert rules, as for pushtrace alerts --rules (env PUSHTRACE_ALERT_RULES).",
            valueName: "file"))
    var alertRules: String?

    @Option(
        help: ArgumentHelp(
            """
            Seconds between evaluations of the alert rules for pushtrace_alert_firing (env PUSHTRACE_ALERT_INTERVAL; \
            default \(Self.defaults.alertInterval.components.seconds)).
            """, valueName: "seconds"))
    var alertInterval: Int?

    @Option(
        help: ArgumentHelp(
            """
            Delete data older than this many days, at start and then hourly, in small batches that do not hold up \
            ingest (env PUSHTRACE_RETENTION; default: keep everything). Records and notification summaries go; the \
            rollups behind reports stay. Reclaim the space with pushtrace vacuum.
            """, valueName: "days"))
    var retention: Int?

    @Option(
        help: ArgumentHelp(
            """
            The address people reach this server's console at, https://push.example.com (env \
            PUSHTRACE_PUBLIC_URL): GET /v1/alerts links each alert to its notifications there.
            """, valueName: "url"))
    var publicURL: String?

    @Option(
        help: ArgumentHelp(
            """
            Seconds a live stream (the console's follow, why --follow) may go without news before it ends (env \
            PUSHTRACE_FOLLOW_IDLE; default \(Self.defaults.liveFollow.idle.components.seconds)).
            """, valueName: "seconds"))
    var followIdle: Int?

    @Flag(help: "Accept every request without a token (env PUSHTRACE_NO_AUTH=1). For local development only.")
    var noAuth = false

    /// The defaults every option above falls back to, and says in its help: each has one definition, in
    /// ``ServerSettings`` and ``BundleLimits`` or here.
    static let defaults = ServerSettings()
    static let defaultDurability = SQLiteStore.Durability.normal
    static let defaultBusyTimeout: Double = 10
    static let defaultLogLevel = Logger.Level.info

    func run() async throws {
        DatabaseOptions.warnOfPasswordInArguments()
        let environment = ProcessInfo.processInfo.environment
        func setting<T>(_ flag: T?, _ name: String, _ parse: (String) -> T?) throws -> T? {
            if let flag { return flag }
            guard let text = environment[name], !text.isEmpty else { return nil }
            guard let value = parse(text) else { throw UsageError("\(name)=\(text) is not a valid value") }
            return value
        }
        var settings = ServerSettings()
        settings.host = try setting(host, "PUSHTRACE_HOST", { $0 }) ?? settings.host
        settings.port = try setting(port, "PUSHTRACE_PORT", Int.init) ?? settings.port
        guard (0...65535).contains(settings.port) else { throw UsageError("port \(settings.port) is not 0…65535") }
        let proxies =
            trustedProxies.isEmpty
            ? (environment["PUSHTRACE_TRUSTED_PROXIES"] ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            : trustedProxies
        do {
            settings.trustedProxies = try TrustedProxies(parsing: proxies)
        } catch {
            throw UsageError("--trusted-proxy (or PUSHTRACE_TRUSTED_PROXIES): \(error.description)")
        }
        let path = try setting(db, "PUSHTRACE_DB", { $0 }) ?? DatabaseOptions.defaultPath
        let durabilityText = try setting(durability, "PUSHTRACE_DURABILITY", { $0 }) ?? Self.defaultDurability.rawValue
        guard let mode = SQLiteStore.Durability(rawValue: durabilityText) else {
            throw UsageError("durability \(durabilityText) is not normal or full")
        }
        settings.maxBodyBytes = try megabytes(
            setting(maxBodyMib, "PUSHTRACE_MAX_BODY_MIB", Int.init), "max body",
            default: settings.maxBodyBytes >> 20)
        settings.limits.maxDecompressedBytes = try megabytes(
            setting(maxDecompressedMib, "PUSHTRACE_MAX_DECOMPRESSED_MIB", Int.init), "max decompressed",
            default: settings.limits.maxDecompressedBytes >> 20)
        let lineKib = try setting(maxLineKib, "PUSHTRACE_MAX_LINE_KIB", Int.init) ?? settings.limits.maxLineBytes >> 10
        guard (1...1 << 20).contains(lineKib) else { throw UsageError("the line limit must be 1 KiB to 1 GiB") }
        settings.limits.maxLineBytes = lineKib << 10
        settings.queueCapacity = try setting(queue, "PUSHTRACE_QUEUE", Int.init) ?? settings.queueCapacity
        guard (1...1_000_000).contains(settings.queueCapacity) else {
            throw UsageError("the queue must hold 1 to 1000000 bundles")
        }
        let budget = try setting(uploadBudgetMib, "PUSHTRACE_UPLOAD_BUDGET_MIB", Int.init) ?? settings.uploadBudgetBytes >> 20
        guard (16...1 << 20).contains(budget) else { throw UsageError("the upload budget must be 16 MiB to 1 TiB") }
        settings.uploadBudgetBytes = budget << 20
        settings.uploadsPerToken = try setting(uploadsPerToken, "PUSHTRACE_UPLOADS_PER_TOKEN", Int.init) ?? settings.uploadsPerToken
        guard settings.uploadsPerToken >= 1 else { throw UsageError("--uploads-per-token must be at least 1") }
        settings.minUploadBytesPerSecond =
            try setting(minUploadRate, "PUSHTRACE_MIN_UPLOAD_RATE", Int.init)
            ?? settings.minUploadBytesPerSecond
        guard (0...100 << 20).contains(settings.minUploadBytesPerSecond) else {
            throw UsageError("--min-upload-rate must be 0 (no minimum) to 104857600 bytes a second")
        }
        let timeout = try setting(busyTimeout, "PUSHTRACE_BUSY_TIMEOUT", Double.init) ?? Self.defaultBusyTimeout
        guard (0...3_600).contains(timeout) else { throw UsageError("the busy timeout must be 0 to 3600 seconds") }
        let levelText = try setting(logLevel, "PUSHTRACE_LOG_LEVEL", { $0 }) ?? Self.defaultLogLevel.rawValue
        guard let level = Logger.Level(rawValue: levelText) else { throw UsageError("log level \(levelText) is not known") }
        settings.alertRules = try Alerts.loadRules(setting(alertRules, "PUSHTRACE_ALERT_RULES", { $0 })).active
        let interval =
            try setting(alertInterval, "PUSHTRACE_ALERT_INTERVAL", Int.init)
            ?? Int(settings.alertInterval.components.seconds)
        guard (1...86_400).contains(interval) else { throw UsageError("the alert interval must be 1 to 86400 seconds") }
        settings.alertInterval = .seconds(interval)
        settings.retentionDays = try setting(retention, "PUSHTRACE_RETENTION", Int.init)
        if let days = settings.retentionDays, !(1...36_500).contains(days) {
            throw UsageError("the retention must be 1 to 36500 days")
        }
        if let idle = try setting(followIdle, "PUSHTRACE_FOLLOW_IDLE", Int.init) {
            guard (1...86_400).contains(idle) else { throw UsageError("--follow-idle must be 1 to 86400 seconds") }
            settings.liveFollow.idle = .seconds(idle)
        }
        if let text = try setting(publicURL, "PUSHTRACE_PUBLIC_URL", { $0 }) {
            guard let url = PublicURL(text) else {
                throw UsageError("--public-url \(text) is not an http:// or https:// URL without a query")
            }
            settings.publicURL = url
        }
        settings.requiresTokens = !(noAuth || ["1", "true", "yes"].contains(environment["PUSHTRACE_NO_AUTH"]?.lowercased() ?? ""))
        if !settings.requiresTokens, !Self.isLoopback(settings.host) {
            throw UsageError(
                "--no-auth serves every app to anyone who can connect: it listens on a loopback address "
                    + "only (127.0.0.1, ::1 or localhost), not \(settings.host)")
        }

        // Every message and field escaped: what a client sent (an app_id, a query) cannot forge a log line.
        var logger = Logger(label: "pushtrace") { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
        logger.logLevel = level
        // Commits of a few dozen bundles, and reads of one notification at a time, need smaller page caches than
        // bulk ingest: they keep the server's memory small. Those many small commits rewrite the same index pages
        // in the log, so it is checkpointed every 16,000 pages (64 MiB) instead of SQLite's 1,000, which takes less
        // server CPU under many uploaders (both measured in docs/PERFORMANCE.md).
        let tuning = StoreEngine.SQLiteTuning(
            durability: mode, busyTimeout: timeout, writerCacheMiB: 16, readerCacheMiB: 2,
            checkpointPages: 16_000)
        let store = try StoreEngine(db: path).open(tuning: tuning) { progress in
            logger.notice(
                "converting the store to record blocks",
                metadata: [
                    "bundles": "\(progress.bundles)", "of": "\(progress.totalBundles)", "records": "\(progress.records)",
                ])
        }
        if !settings.requiresTokens {
            let warning =
                "NO AUTHENTICATION (--no-auth): anyone who can reach this port can upload and read every app. "
                + "Use it for local development only."
            printError("pushtrace: WARNING: " + warning)
            logger.warning("\(warning)")
        }
        logger.info(
            "pushtrace serving",
            metadata: [
                "version": "\(PushTraceVersion.release)", "address": "\(settings.host):\(settings.port)",
                "db": "\(StoreEngine.shown(path))",
                "durability": "\(mode.rawValue)",
                "max_body_bytes": "\(settings.maxBodyBytes)", "queue": "\(settings.queueCapacity)",
            ])
        let app = ServerApplication.make(store: store, settings: settings, logger: logger)
        do {
            try await app.runService()
        } catch let error as IOError {
            throw UsageError(Self.listenFailure(error.errnoCode, host: settings.host, port: settings.port) ?? "\(error)")
        } catch is SocketAddressError.UnknownHost {
            throw UsageError(
                "cannot listen on \(settings.host): no such host (--host or PUSHTRACE_HOST: an address or "
                    + "a name of this machine, e.g. 127.0.0.1 or 0.0.0.0)")
        }
    }

    /// Whether `host` is an address of this machine's loopback interface, which no other machine can reach.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// What an operator can do about a failure to listen, from the socket call's errno.
    private static func listenFailure(_ errno: Int32, host: String, port: Int) -> String? {
        let address = "cannot listen on \(host):\(port)"
        switch errno {
        case EADDRINUSE:
            return "\(address): the port is in use (another pushtrace serve?); choose another with --port or PUSHTRACE_PORT"
        case EACCES:
            return "\(address): permission denied (ports below 1024 need privileges); choose another with --port"
        case EADDRNOTAVAIL:
            return "\(address): \(host) is not an address of this machine (--host or PUSHTRACE_HOST)"
        default:
            return nil
        }
    }

    private func megabytes(_ value: Int?, _ name: String, default fallback: Int) throws -> Int {
        let mib = value ?? fallback
        guard (1...1 << 20).contains(mib) else { throw UsageError("the \(name) limit must be 1 MiB to 1 TiB") }
        return mib << 20
    }
}
