import AsyncHTTPClient
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushTraceCore
import PushTraceGzip
import PushTracePostgres
import PushTraceServer
import PushTraceStore
import PushTraceTestSupport

@testable import PushTraceSQLite

/// A live pushtrace server on 127.0.0.1 over a fresh store, with a token of each kind.
struct TestServer: Sendable {
    let folder: TemporaryStore
    var settings: ServerSettings
    /// Kept short so that a lock held elsewhere turns into 503 quickly.
    var busyTimeout: TimeInterval = 0.5
    /// When set, the server's writer may not grow the database file: SQLite then fails as on a full disk.
    var diskFull = false
    /// The server's logger (default: warnings and errors to standard error).
    var logger: Logger?
    let ingestToken: String
    let readToken: String
    let adminToken: String
    /// An ingest token of another app.
    let otherAppToken: String
    /// A token that reads /metrics by app, and nothing else.
    let metricsToken: String

    static let app = "net.rorklab.dailypick"
    static let otherApp = "io.acme.fitlog"

    init(engine: TestEngine = .sqlite, configure: (inout ServerSettings) -> Void = { _ in }) async throws {
        folder = try TemporaryStore(engine: engine)
        settings = ServerSettings()
        settings.port = 0
        configure(&settings)
        let store = folder.store
        func token(_ app: String?, _ scope: TokenScope) async throws -> String {
            try await store.createToken(appID: app, scope: scope, label: nil, now: Lines.t0).1.text
        }
        ingestToken = try await token(Self.app, .ingest)
        readToken = try await token(Self.app, .read)
        adminToken = try await token(nil, .admin)
        otherAppToken = try await token(Self.otherApp, .ingest)
        metricsToken = try await token(nil, .metrics)
    }

    /// Runs `body` against the live server; the server is stopped (gracefully) afterwards.
    func run<T: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        var logger = self.logger ?? Logger(label: "pushtrace-test")
        if self.logger == nil { logger.logLevel = .warning }
        // The writer closes the store at shutdown: the server gets its own, the test keeps `folder.store`.
        let store: any TraceStore
        if folder.engine == .postgres {
            store = try PostgresStore(url: folder.path, connections: 4)
            let app = ServerApplication.make(store: store, settings: settings, logger: logger)
            return try await app.test(.live, body)
        }
        let sqlite = try SQLiteStore(path: folder.path, busyTimeout: busyTimeout)
        store = sqlite
        if diskFull {
            try await sqlite.pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA max_page_count = \(try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0)")
            }
        }
        let app = ServerApplication.make(store: store, settings: settings, logger: logger)
        return try await app.test(.live, body)
    }

    /// Row counts of every table.
    func counts() throws -> [String: Int] { try folder.counts() }

    /// Holds the database's write lock from another connection, as another process would, until `release`.
    func holdWriteLock() throws -> WriteLock { try WriteLock(path: folder.path) }
}

/// Another connection in a write transaction: the server's commits wait for it.
final class WriteLock: Sendable {
    private let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
    }

    func release() throws {
        try queue.writeWithoutTransaction { try $0.execute(sql: "COMMIT") }
    }
}

/// Request helpers.
extension TestClientProtocol {
    func upload(
        _ body: [UInt8], token: String?, path: String = "/v1/bundles", encoding: String? = "gzip",
        extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        headers[.contentType] = "application/x-ndjson"
        if let encoding { headers[.contentEncoding] = encoding }
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    func get(_ uri: String, token: String?, accept: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let accept { headers[.accept] = accept }
        return try await execute(uri: uri, method: .get, headers: headers)
    }

    func head(_ uri: String, token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: uri, method: .head, headers: headers)
    }
}

/// What a concurrent upload got back.
struct UploadOutcome: Sendable {
    let status: Int
    let retryAfter: String?
    /// The JSON error body's `error`, if any.
    let error: String?
}

/// Uploads `count` fresh small bundles at once, each on a connection of its own (the test client has one, which
/// would make them wait in turn), while `meanwhile` runs; returns what each got back.
func concurrentUploads(
    _ count: Int, port: Int, token: String,
    meanwhile: @Sendable () async throws -> Void = {}
) async throws -> [UploadOutcome] {
    try await withThrowingTaskGroup(of: UploadOutcome.self) { group in
        for _ in 0..<count {
            group.addTask {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/bundles")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                request.headers.add(name: "Content-Encoding", value: "gzip")
                request.body = .bytes(Bodies.bundle())
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                return UploadOutcome(
                    status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After"),
                    error: json?["error"] as? String)
            }
        }
        try await meanwhile()
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

extension TestResponse {
    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
    }

    var text: String { String(buffer: body) }
}

/// Small bundles, gzip-compressed as the agent sends them.
enum Bodies {
    static func bundle(
        app: String = TestServer.app, bundle: String = UUID().uuidString, notification: String = UUID().uuidString
    )
        -> [UInt8]
    {
        gzip([Lines.manifest(app: app, bundle: bundle)] + Lines.serviceSteps(notification))
    }

    static func events(app: String = TestServer.app, notification: String) -> [UInt8] {
        gzip([Lines.manifest(app: app, device: nil)] + Lines.sent(notification))
    }

    static func gzip(_ lines: [String]) -> [UInt8] {
        Deflater.gzip(Array(lines.map { $0 + "\n" }.joined().utf8))
    }
}
