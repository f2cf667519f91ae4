import Foundation
import GRDB
import PushTraceCore
import PushTracePostgres
import PushTraceSQLite
import PushTraceSimulator
import PushTraceStore

/// An engine the store-interface suite runs against: `@Test(arguments: TestEngine.all)`.
public enum TestEngine: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// The cluster the PostgreSQL engine is tested on: `scripts/with-postgres.sh` (which `make test` runs the tests
    /// beside) starts a throwaway one and sets it.
    public static var postgresCluster: String? {
        ProcessInfo.processInfo.environment["PUSHTRACE_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The engines every interface test runs on: PostgreSQL when a test cluster is given (`make test` always gives
    /// one, and a test fails when it is asked for and missing: `PUSHTRACE_REQUIRE_POSTGRES`).
    public static let all: [TestEngine] = postgresCluster == nil ? [.sqlite] : [.sqlite, .postgres]

    public var description: String { rawValue }
}

/// A fresh store of an engine, in a temporary folder removed when the test ends.
public final class TemporaryStore: Sendable {
    public let directory: URL
    public let store: any TraceStore
    public let engine: TestEngine

    /// The database of its own a PostgreSQL store was given, dropped with it.
    private let database: String?
    /// The PostgreSQL store's URL, password included: what `--db` takes to open it again.
    public let url: String?

    public init(engine: TestEngine = .sqlite) throws {
        self.engine = engine
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushtrace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch engine {
        case .sqlite:
            store = try SQLiteStore(path: directory.appendingPathComponent("test.sqlite").path)
            database = nil
            url = nil
        case .postgres:
            guard let cluster = TestEngine.postgresCluster else {
                throw TestSetupError("no PostgreSQL test cluster: run the tests with scripts/with-postgres.sh (make test does)")
            }
            let name = "pt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            url = try PostgresDatabases.create(name, cluster: cluster)
            store = try PostgresStore(url: url!, connections: 4)
            database = name
        }
    }

    /// The SQLite store, for the SQLite engine's own tests.
    public var sqlite: SQLiteStore { store as! SQLiteStore }

    /// The database file (SQLite) or URL (PostgreSQL): what `--db` takes.
    public var path: String { url ?? store.location }

    deinit {
        try? FileManager.default.removeItem(at: directory)
        if let database, let cluster = TestEngine.postgresCluster {
            try? store.close()
            // DROP DATABASE waits for a checkpoint. A test's last reference often goes on one of the few cooperative
            // threads every test's server runs on, so the drop runs on a thread of its own.
            Thread { try? PostgresDatabases.drop(database, cluster: cluster) }.start()
        }
    }

    /// Stores one bundle's bytes as the CLI and the server do.
    @discardableResult
    public func ingest(_ bytes: [UInt8], receivedAt: Int64 = 1_763_622_004_000) throws -> IngestResult {
        let decoder = BundleDecoder(encoding: .sniff)
        return try store.ingest(source: "test", receivedAt: receivedAt) { sink in
            try bytes.withUnsafeBytes { try decoder.consume($0, sink) }
            try decoder.finish(sink)
        }
    }

    @discardableResult
    public func ingest(_ lines: [String], receivedAt: Int64 = 1_763_622_004_000) throws -> IngestResult {
        try ingest(Array(lines.map { $0 + "\n" }.joined().utf8), receivedAt: receivedAt)
    }

    /// Row counts of every table: what "nothing changed" is checked against.
    public func counts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let tables = ["bundle", "rejected_line", "config", "config_body", "device", "notification", "record_block", "notification_block"]
        // Stored records: the lines of every block. Through the read-only query `pushtrace sql` uses, which every
        // engine answers.
        let sql =
            "SELECT " + tables.map { "(SELECT count(*) FROM \($0))" }.joined(separator: ", ")
            + ", (SELECT coalesce(sum(lines), 0) FROM record_block)"
        try store.readOnlyQuery(sql, columns: { _ in }) { row in
            for (name, value) in zip(tables + ["record"], row) {
                if case .integer(let count) = value { counts[name] = Int(count) }
            }
        }
        return counts
    }
}

/// A test's set-up could not be made.
public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Lines of small bundles for store tests.
public enum Lines {
    public static let t0: Int64 = 1_763_622_000_000

    public static func manifest(
        app: String = "net.rorklab.dailypick", bundle: String = UUID().uuidString, device: String? = "d-1",
        uploadedAt: Int64? = nil
    ) -> String {
        var line = #"{"type":"manifest","schema":1,"bundle_id":"\#(bundle)","app_id":"\#(app)""#
        if let device { line += #","device_id":"\#(device)""# }
        if let uploadedAt { line += #","uploaded_at":\#(uploadedAt)"# }
        return line + "}"
    }

    public static func sent(_ id: String, at: Int64 = t0, device: String = "d-1", category: String = "DAILY_PICK") -> [String] {
        [
            #"{"type":"event","ts":\#(at),"process":"server","event":"push.sent","notification_id":"\#(id)","category":"\#(category)","mutable_content":true,"has_alert":true,"payload_bytes":700,"device_id":"\#(device)"}"#,
            #"{"type":"event","ts":\#(at + 100),"process":"server","event":"push.apns_response","notification_id":"\#(id)","status":200}"#,
        ]
    }

    public static func serviceSteps(
        _ id: String, at: Int64 = t0 + 800, expired: Bool = false,
        category: String = "DAILY_PICK"
    ) -> [String] {
        var lines = [
            #"{"type":"event","ts":\#(at),"process":"service","event":"service.received","notification_id":"\#(id)","category":"\#(category)"}"#,
            #"{"type":"log","ts":\#(at + 1),"process":"service","level":"info","message":"downloading","notification_id":"\#(id)"}"#,
        ]
        if expired {
            lines.append(
                #"{"type":"event","ts":\#(at + 29_900),"process":"service","event":"service.expired","notification_id":"\#(id)","elapsed_ms":29900}"#
            )
        } else {
            lines.append(
                #"{"type":"event","ts":\#(at + 400),"process":"service","event":"service.delivered","notification_id":"\#(id)","elapsed_ms":400}"#
            )
        }
        return lines
    }
}

extension TemporaryStore {
    /// The bundle files of a simulation under `directory`, in name order.
    public static func bundleFiles(in directory: URL) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: directory.path)
            .filter { $0.contains(".ndjson") }.sorted().map { directory.appendingPathComponent($0).path }
    }

    /// Ingests every bundle file under `directory` as `pushtrace ingest` does, then settles the causes.
    public func ingestFiles(in directory: URL) throws {
        try FileIngestor(store: store).ingest(paths: Self.bundleFiles(in: directory)) { path, outcome in
            if case .refused(let error) = outcome { preconditionFailure("\(path) refused: \(error)") }
            if case .unreadable(let reason) = outcome { preconditionFailure("\(path) unreadable: \(reason)") }
        }
        try store.settleCauses()
    }

    /// A seeded simulation, ingested and settled.
    public static func simulated(engine: TestEngine = .sqlite, seed: UInt64 = 11, notifications: Int = 3_000) throws -> TemporaryStore {
        let temporary = try TemporaryStore(engine: engine)
        let bundles = temporary.directory.appendingPathComponent("bundles")
        _ = try Simulator.run(SimulationOptions(seed: seed, notifications: notifications), into: bundles)
        try temporary.ingestFiles(in: bundles)
        return temporary
    }
}
