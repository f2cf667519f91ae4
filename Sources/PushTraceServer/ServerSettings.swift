import PushTraceConsole
import PushTraceCore
import PushTraceStore

/// How `pushtrace serve` runs: where it listens, what it accepts, and how it pushes back under load.
public struct ServerSettings: Sendable {
    public var host = "127.0.0.1"
    /// The proxies whose `X-Forwarded-For` names the client in the logs (none: the peer is the client).
    public var trustedProxies = TrustedProxies.none
    public var port = 8080
    /// Decompressed size and line length caps of one bundle (413 and a rejected line when over).
    public var limits = BundleLimits.default
    /// The largest request body as received (compressed), in bytes; 413 when over.
    public var maxBodyBytes = 16 << 20
    /// Bundles decoded and waiting for the writer; a request that finds it full gets 429.
    public var queueCapacity = 256
    /// Memory for uploads in progress, in bytes of what their decoded bundles hold (``IngestBudget``): a request
    /// that finds it spent waits up to ``budgetWait``, then gets 429.
    public var uploadBudgetBytes = 512 << 20
    /// The part of ``uploadBudgetBytes`` the uploads of one ingest token may hold together, and of
    /// ``queueCapacity`` its bundles may take: a quarter, so that several apps' public tokens misused at once still
    /// leave room for the others.
    public var tokenBudgetShare = 0.25
    /// Uploads one ingest token may run at once; more get 429.
    public var uploadsPerToken = 32
    /// How long a request waits for room in the upload budget before it is refused with 429.
    public var budgetWait: Duration = .seconds(2)
    /// After ``slowUploadGrace``, an upload's body must come at least this fast on average (408 and closed if not).
    public var minUploadBytesPerSecond = 1024
    /// How long an upload may send slowly before its rate is judged.
    public var slowUploadGrace: Duration = .seconds(10)
    /// The longest an upload's body may take, time waiting for the budget not counted (408 and closed past it): at
    /// the minimum rate a large body could otherwise hold its share of the budget for hours.
    public var maxUploadDuration: Duration = .seconds(300)
    /// At most this many bundles share one commit.
    public var maxBundlesPerCommit = 2_000
    /// Store calls the interface does not yet await (the alert monitor's lease, the console's cause counts) that may
    /// wait on the database at once (``BlockingWork``); more wait their turn.
    public var storeThreads = 4
    /// At most this many lines share one commit (a bundle with more commits alone), so that the small bundles of
    /// other apps do not wait behind a huge one.
    public var maxLinesPerCommit = 100_000
    /// `Retry-After` of a 429 (the queue drains in well under a second).
    public var retryAfterOverloaded = 1
    /// `Retry-After` of a 503 (storage failed: a lock held elsewhere, a full disk).
    public var retryAfterUnavailable = 5
    /// When false, every request is allowed without a token: for local development only.
    public var requiresTokens = true
    /// How long a token read from the store is trusted without asking again; a revoked token stops working
    /// within this time. Zero asks the store on every request that names a stored token. A token ID the store
    /// does not hold is remembered apart, for longer (``TokenCache``).
    public var tokenCacheSeconds: Double = 2
    /// Under steady load, how long the notification summaries of committed bundles may wait to be written
    /// together (see ``IngestWriter``); they are written as soon as uploads pause, and before a search.
    public var summaryDelay: Duration = .seconds(2)
    /// How many notifications are diagnosed per step between commits.
    public var settleStep = 2_000
    /// The alert rules the server evaluates (and `GET /v1/alerts` answers with).
    public var alertRules = AlertRule.builtIn
    /// How often the rules are evaluated for `pushtrace_alert_firing`.
    public var alertInterval: Duration = .seconds(60)
    /// Delete data older than this many days (`TraceStore.deleteExpired`), hourly in small batches; nil keeps everything.
    public var retentionDays: Int?
    /// How long a connection may send nothing (a client stalled mid-request, an idle keep-alive) before it is closed.
    public var idleTimeout: Duration = .seconds(60)

    /// The console's address as the world reaches it: `GET /v1/alerts` links each alert to its notifications there.
    public var publicURL: PublicURL?
    /// How the console's live streams are bounded.
    public var liveFollow = LiveFollowLimits()
    /// Failed console sign-ins one address may make before each further try must wait (``LoginThrottle``).
    public var freeLoginFailures = 5
    /// How long a sign-in must wait after the first failure past the free ones (at least 1 s); each further failure
    /// doubles it.
    public var firstLoginWait: Duration = .seconds(2)

    public init() {}
}
